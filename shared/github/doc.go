// Package github owns the service's conversation with GitHub: the REST client
// the merge-queue driver uses (pull requests, branch heads, the required
// status checks of branch protection and rulesets with the Apps they are
// bound to, test-branch assembly through the Git Data API, checks, merging,
// commit statuses, branch deletion), its authentication (a static token or a
// GitHub App with per-repository installation tokens), the classification of
// GitHub's errors into retryable and final ones (a rate-limited token is held
// until GitHub's retry-after or reset), and webhook intake (signature
// verification and parsing into a small normalized event).
//
// Every operation takes a context, talks to a configurable base URL (GitHub,
// GitHub Enterprise or the githubsim test server), and is idempotent where it
// changes something, so that the driver may retry any of them after a lost
// answer. GitHub's own error types never leave the package: errors carry an
// errs code, and Retryable says whether and when to try again.
package github
