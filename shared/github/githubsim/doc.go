// Package githubsim owns a GitHub test server: the REST endpoints the
// merge-queue client uses, answered with GitHub's documented shapes, statuses
// and error bodies, over real bare git repositories driven through the git CLI
// (merges and conflicts are git's own), with pull requests, commit statuses,
// check runs, branch protection and rulesets held in memory. What git
// answers about refs and immutable objects is remembered (gitcache.go), so
// a question asked again starts no git process; git stays the only source
// of every answer.
//
// It is as strict as GitHub, always: a merge through the API is refused
// (405, GitHub's message) while a required status check of protection or
// of a ruleset (bound to its App when one is named) is missing, pending or
// failing on the head, or the head is behind under a strict policy;
// mergeable is null on the first read after a change of head or base and
// known from the next; values over GitHub's limits are 422 with its
// errors[]; a request without a User-Agent is 403; every answer carries
// the X-RateLimit-* headers and a token's hour runs out as GitHub's does
// (strict.go, mergegate.go, rulesets.go).
//
// It is an ordinary package, not a test file, so that tests and the local
// program (mainguard serve --github-sim) share it. Besides the REST surface it
// offers a control API (create a repository, commit, open and change pull
// requests, set statuses and checks, read a branch's history), fault
// injection for the retry paths (5xx, primary and secondary rate limits,
// hangs, and a response lost after the action was done) and webhook
// deliveries of its own state changes, with every header GitHub sends:
// pull_request (opened, synchronize, closed, reopened, edited,
// converted_to_draft, ready_for_review, labeled, unlabeled), push, status,
// check_run, check_suite (completed) and issue_comment (created, edited).
//
// Endpoints served (paths relative to the base URL):
//
//	GET    /repos/{o}/{r}/pulls/{n}
//	PUT    /repos/{o}/{r}/pulls/{n}/merge
//	GET    /repos/{o}/{r}/git/ref/heads/{branch}
//	POST   /repos/{o}/{r}/git/refs
//	PATCH  /repos/{o}/{r}/git/refs/heads/{branch}
//	DELETE /repos/{o}/{r}/git/refs/heads/{branch}
//	GET    /repos/{o}/{r}/branches/{branch}
//	GET    /repos/{o}/{r}/branches/{branch}/protection/required_status_checks
//	GET    /repos/{o}/{r}/rules/branches/{branch}
//	POST   /repos/{o}/{r}/merges
//	GET    /repos/{o}/{r}/commits/{ref}/status
//	GET    /repos/{o}/{r}/commits/{ref}/check-runs      (check_name, status, app_id, filter)
//	GET    /repos/{o}/{r}/commits/{ref}/check-suites
//	POST   /repos/{o}/{r}/check-runs                    (a GitHub App only; checkruns.go)
//	PATCH  /repos/{o}/{r}/check-runs/{id}               (the App that made it only)
//	GET    /repos/{o}/{r}/check-runs/{id}
//	POST   /repos/{o}/{r}/statuses/{sha}
//	GET    /repos/{o}/{r}/pulls?state=&head=&base=
//	POST   /repos/{o}/{r}/pulls
//	PATCH  /repos/{o}/{r}/pulls/{n}
//	GET    /repos/{o}/{r}/issues/{n}/comments
//	POST   /repos/{o}/{r}/issues/{n}/comments
//	PATCH  /repos/{o}/{r}/issues/comments/{id}
//	POST   /repos/{o}/{r}/issues/comments/{id}/reactions
//	GET    /repos/{o}/{r}/issues/{n}/labels
//	POST   /repos/{o}/{r}/issues/{n}/labels
//	DELETE /repos/{o}/{r}/issues/{n}/labels/{name}
//	GET    /repos/{o}/{r}/collaborators/{user}/permission
//	GET    /apps/{slug}
//	GET    /repos/{o}/{r}/installation                  (GitHub App JWT)
//	POST   /app/installations/{id}/access_tokens         (GitHub App JWT)
//	POST   /app-manifests/{code}/conversions             (manifest.go)
//	POST   /settings/apps/new, /organizations/{org}/settings/apps/new  (web)
//
// and, for a person's browser, plain pages of a repository, a pull request,
// a commit and a branch at GitHub's web paths (web.go), where the web app's
// links "on its host" go when the simulated GitHub stands for GitHub.
package githubsim
