// Package ciinfo reads what a CI job is testing from the environment its
// CI sets: the repository, the commit, the branch, the pull request and
// its target branch, the job's address and which attempt of the job this
// is, each with where it came from. It knows GitHub Actions, GitLab CI,
// Buildkite, CircleCI, Jenkins, Azure Pipelines and Bitbucket Pipelines,
// by the variables each documents, and falls back to git in the checkout
// for what the environment does not say. It does no I/O of its own: the
// caller hands it the environment, a file reader and git.
package ciinfo

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/repository"
)

// Value is one detected value and where it came from: the name of an
// environment variable, "GITHUB_EVENT_PATH" (GitHub's event payload),
// "git", or "flag" once a caller overrides it; From is "" when nothing said.
type Value struct {
	Value string
	From  string
}

// Info is what a CI job is testing.
type Info struct {
	// CI names the CI system ("GitHub Actions", …); "" outside a known CI.
	CI string
	// RepoURL is the repository's address as the CI (or git's origin)
	// gives it; Repo reads it.
	RepoURL Value
	SHA     Value
	// Branch is the branch tested: a pull request's head branch.
	Branch Value
	// PR is the pull request (merge request) number, in decimal.
	PR Value
	// Base is a pull request's target branch.
	Base   Value
	JobURL Value
	// Attempt counts the runs of this job on this commit from 1; "" when
	// the CI does not say (CircleCI and Jenkins start a re-run as a new
	// job; it tests the same commit all the same).
	Attempt Value
	// Envs are the CI's variables this read, by name (never a secret: only
	// the variables below are read), for the upload's meta.json, where the
	// service looks for the pull request number.
	Envs map[string]string
}

// Env is the world Detect reads.
type Env struct {
	Getenv func(string) string
	// ReadFile reads GitHub's event payload (GITHUB_EVENT_PATH).
	ReadFile func(name string) ([]byte, error)
	// Git runs git in the checkout and answers its trimmed output; nil
	// means no git fallback.
	Git func(args ...string) (string, error)
}

// Detect reads the CI's environment, then git for what it left out.
func Detect(e Env) Info {
	r := &reader{env: e, info: Info{Envs: map[string]string{}}}
	for _, ci := range systems {
		if ci.is(r) {
			r.info.CI = ci.name
			ci.read(r)
			break
		}
	}
	r.fromGit()
	return r.info
}

// Repo is the repository RepoURL names.
func (i Info) Repo() (repository.Ref, error) {
	if strings.Count(i.RepoURL.Value, "/") == 2 && !strings.Contains(i.RepoURL.Value, ":") {
		return repository.Parse(i.RepoURL.Value) // HOST/OWNER/NAME, as a flag gives it
	}
	return repository.ParseRemote(i.RepoURL.Value)
}

// PRNumber is PR as a number, 0 when none.
func (i Info) PRNumber() int {
	n, err := strconv.Atoi(i.PR.Value)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

type reader struct {
	env  Env
	info Info
}

// get is a variable's value, remembered in Envs when set. Credentials in
// an address (https://user:token@host/…, as some CIs' clone URLs hold)
// are dropped: nothing this returns may be a secret.
func (r *reader) get(name string) string {
	v := withoutCredentials(strings.TrimSpace(r.env.Getenv(name)))
	if v != "" {
		r.info.Envs[name] = v
	}
	return v
}

// set fills *dst from the first of names that is set (and passes ok).
func (r *reader) set(dst *Value, ok func(string) bool, names ...string) {
	for _, n := range names {
		if v := r.get(n); v != "" && (ok == nil || ok(v)) {
			*dst = Value{v, n}
			return
		}
	}
}

func withoutCredentials(v string) string {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return v
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	u.User = nil
	return u.String()
}

// number accepts a positive decimal integer: Buildkite and Travis write
// "false" where there is no pull request.
func number(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n > 0
}

// fromGit fills what the environment left empty from the checkout.
func (r *reader) fromGit() {
	if r.env.Git == nil {
		return
	}
	i := &r.info
	if i.SHA.Value == "" {
		if v, err := r.env.Git("rev-parse", "HEAD"); err == nil && v != "" {
			i.SHA = Value{v, "git"}
		}
	}
	if i.Branch.Value == "" {
		// A detached HEAD (what most CIs check out) has no branch.
		if v, err := r.env.Git("symbolic-ref", "--short", "-q", "HEAD"); err == nil && v != "" {
			i.Branch = Value{v, "git"}
		}
	}
	if i.RepoURL.Value == "" {
		if v, err := r.env.Git("remote", "get-url", "origin"); err == nil && v != "" {
			i.RepoURL = Value{withoutCredentials(v), "git"}
		}
	}
}

// branchName drops the ref prefixes CIs put before a branch's name.
func branchName(v Value) Value {
	for _, p := range []string{"refs/heads/", "origin/"} {
		v.Value = strings.TrimPrefix(v.Value, p)
	}
	return v
}

// system is one CI: how to tell it is running, and what it says.
type system struct {
	name string
	is   func(*reader) bool
	read func(*reader)
}

func setTo(name string) func(*reader) bool {
	return func(r *reader) bool { return r.env.Getenv(name) != "" }
}

// systems, each read from the variables its documentation lists (cited
// beside each). The order only matters for a job that looks like two.
var systems = []system{
	{"GitHub Actions", setTo("GITHUB_ACTIONS"), githubActions},
	{"GitLab CI", setTo("GITLAB_CI"), gitlab},
	{"Buildkite", setTo("BUILDKITE"), buildkite},
	{"CircleCI", setTo("CIRCLECI"), circleci},
	{"Azure Pipelines", setTo("TF_BUILD"), azure},
	{"Bitbucket Pipelines", setTo("BITBUCKET_BUILD_NUMBER"), bitbucket},
	{"Jenkins", setTo("JENKINS_URL"), jenkins},
}

// githubActions: https://docs.github.com/en/actions/reference/variables-reference
// (GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_SHA, GITHUB_REF,
// GITHUB_REF_NAME, GITHUB_HEAD_REF, GITHUB_BASE_REF, GITHUB_RUN_ID,
// GITHUB_RUN_ATTEMPT: "a unique number for each attempt of a particular
// workflow run … begins at 1 … and increments with each re-run",
// GITHUB_EVENT_PATH). On a pull request GITHUB_SHA is the merge commit
// GitHub made for the run, not the pull request's head: the head is read
// from the event payload (pull_request.head.sha), so that the results and
// the check run land on the commit the pull request shows. A re-run keeps
// GITHUB_SHA and the payload of the first attempt.
func githubActions(r *reader) {
	i := &r.info
	server, repo := r.get("GITHUB_SERVER_URL"), r.get("GITHUB_REPOSITORY")
	if server == "" {
		server = "https://github.com"
	}
	if repo != "" {
		i.RepoURL = Value{strings.TrimRight(server, "/") + "/" + repo, "GITHUB_REPOSITORY"}
	}
	r.set(&i.SHA, nil, "GITHUB_SHA")
	ref := r.get("GITHUB_REF")
	if rest, ok := strings.CutPrefix(ref, "refs/pull/"); ok {
		if n, _, _ := strings.Cut(rest, "/"); number(n) {
			i.PR = Value{n, "GITHUB_REF"}
		}
	}
	r.set(&i.Branch, nil, "GITHUB_HEAD_REF")
	if i.Branch.Value == "" && strings.HasPrefix(ref, "refs/heads/") {
		i.Branch = branchName(Value{ref, "GITHUB_REF"})
	}
	r.set(&i.Base, nil, "GITHUB_BASE_REF")
	r.get("GITHUB_EVENT_NAME")
	if path := r.get("GITHUB_EVENT_PATH"); path != "" && r.env.ReadFile != nil {
		if body, err := r.env.ReadFile(path); err == nil {
			var ev struct {
				PullRequest *struct {
					Number int `json:"number"`
					Head   struct {
						SHA string `json:"sha"`
						Ref string `json:"ref"`
					} `json:"head"`
					Base struct {
						Ref string `json:"ref"`
					} `json:"base"`
				} `json:"pull_request"`
			}
			if json.Unmarshal(body, &ev) == nil && ev.PullRequest != nil && ev.PullRequest.Head.SHA != "" {
				pr := ev.PullRequest
				i.SHA = Value{pr.Head.SHA, "GITHUB_EVENT_PATH"}
				if pr.Number > 0 {
					i.PR = Value{strconv.Itoa(pr.Number), "GITHUB_EVENT_PATH"}
				}
				if pr.Head.Ref != "" && i.Branch.Value == "" {
					i.Branch = Value{pr.Head.Ref, "GITHUB_EVENT_PATH"}
				}
				if pr.Base.Ref != "" && i.Base.Value == "" {
					i.Base = Value{pr.Base.Ref, "GITHUB_EVENT_PATH"}
				}
			}
		}
	}
	if id := r.get("GITHUB_RUN_ID"); id != "" && repo != "" {
		i.JobURL = Value{strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id, "GITHUB_RUN_ID"}
	}
	r.set(&i.Attempt, number, "GITHUB_RUN_ATTEMPT")
}

// gitlab: https://docs.gitlab.com/ci/variables/predefined_variables/
// (CI_PROJECT_URL, CI_COMMIT_SHA, CI_COMMIT_BRANCH, CI_COMMIT_REF_NAME,
// CI_JOB_URL; for merge request pipelines CI_MERGE_REQUEST_IID,
// CI_MERGE_REQUEST_SOURCE_BRANCH_NAME, CI_MERGE_REQUEST_TARGET_BRANCH_NAME
// and, in merged results pipelines, CI_MERGE_REQUEST_SOURCE_BRANCH_SHA,
// the head where CI_COMMIT_SHA is the merge commit). CI_PROJECT_URL, not
// CI_REPOSITORY_URL, which holds the job's token. A retried job is a new
// job of the same pipeline and commit; CI_JOB_RETRY_COUNT (0 at first)
// counts the retries where GitLab sets it.
func gitlab(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "CI_PROJECT_URL")
	r.set(&i.SHA, nil, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "CI_COMMIT_SHA")
	r.set(&i.Branch, nil, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME")
	r.set(&i.PR, number, "CI_MERGE_REQUEST_IID")
	r.set(&i.Base, nil, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME")
	r.set(&i.JobURL, nil, "CI_JOB_URL")
	retries(r, "CI_JOB_RETRY_COUNT")
}

// retries sets Attempt from a count of retries (0 on the first run).
func retries(r *reader, name string) {
	if v := r.get(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			r.info.Attempt = Value{strconv.Itoa(n + 1), name}
		}
	}
}

// buildkite: https://buildkite.com/docs/pipelines/environment-variables
// (BUILDKITE_REPO, BUILDKITE_COMMIT, BUILDKITE_BRANCH,
// BUILDKITE_PULL_REQUEST — the number, or "false" —,
// BUILDKITE_PULL_REQUEST_BASE_BRANCH, BUILDKITE_BUILD_URL,
// BUILDKITE_JOB_ID, BUILDKITE_RETRY_COUNT: how many times this job has
// been retried).
func buildkite(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "BUILDKITE_REPO")
	r.set(&i.SHA, nil, "BUILDKITE_COMMIT")
	r.set(&i.Branch, nil, "BUILDKITE_BRANCH")
	r.set(&i.PR, number, "BUILDKITE_PULL_REQUEST")
	r.set(&i.Base, nil, "BUILDKITE_PULL_REQUEST_BASE_BRANCH")
	if u := r.get("BUILDKITE_BUILD_URL"); u != "" {
		if job := r.get("BUILDKITE_JOB_ID"); job != "" {
			u += "#" + job
		}
		i.JobURL = Value{u, "BUILDKITE_BUILD_URL"}
	}
	retries(r, "BUILDKITE_RETRY_COUNT")
}

// circleci: https://circleci.com/docs/reference/variables/
// (CIRCLE_REPOSITORY_URL, CIRCLE_SHA1, CIRCLE_BRANCH, CIRCLE_PULL_REQUEST —
// the pull request's URL —, CIRCLE_PR_NUMBER — forked pull requests only
// —, CIRCLE_BUILD_URL). CircleCI names no target branch and no attempt:
// "rerun" makes a new job on the same commit.
func circleci(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "CIRCLE_REPOSITORY_URL")
	r.set(&i.SHA, nil, "CIRCLE_SHA1")
	r.set(&i.Branch, nil, "CIRCLE_BRANCH")
	r.set(&i.PR, number, "CIRCLE_PR_NUMBER")
	if i.PR.Value == "" {
		if u := r.get("CIRCLE_PULL_REQUEST"); u != "" {
			if k := strings.LastIndex(u, "/pull/"); k >= 0 {
				if n := strings.TrimSuffix(u[k+len("/pull/"):], "/"); number(n) {
					i.PR = Value{n, "CIRCLE_PULL_REQUEST"}
				}
			}
		}
	}
	r.set(&i.JobURL, nil, "CIRCLE_BUILD_URL")
}

// azure: https://learn.microsoft.com/azure/devops/pipelines/build/variables
// (Build.Repository.Uri, Build.SourceVersion, Build.SourceBranch,
// Build.BuildId, System.CollectionUri, System.TeamProject,
// System.JobAttempt: 1 at first, one more at each retry; for pull
// requests System.PullRequest.PullRequestNumber (GitHub) or
// .PullRequestId, .SourceBranch, .TargetBranch and .SourceCommitId, the
// head where Build.SourceVersion is the merge commit), as the agent
// exports them: upper case, dots as underscores.
func azure(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "BUILD_REPOSITORY_URI")
	r.set(&i.SHA, nil, "SYSTEM_PULLREQUEST_SOURCECOMMITID", "BUILD_SOURCEVERSION")
	r.set(&i.Branch, nil, "SYSTEM_PULLREQUEST_SOURCEBRANCH")
	if i.Branch.Value == "" {
		r.set(&i.Branch, func(v string) bool { return strings.HasPrefix(v, "refs/heads/") }, "BUILD_SOURCEBRANCH")
	}
	i.Branch = branchName(i.Branch)
	r.set(&i.PR, number, "SYSTEM_PULLREQUEST_PULLREQUESTNUMBER", "SYSTEM_PULLREQUEST_PULLREQUESTID")
	r.set(&i.Base, nil, "SYSTEM_PULLREQUEST_TARGETBRANCH")
	i.Base = branchName(i.Base)
	if c, p, id := r.get("SYSTEM_COLLECTIONURI"), r.get("SYSTEM_TEAMPROJECT"), r.get("BUILD_BUILDID"); c != "" && id != "" {
		i.JobURL = Value{strings.TrimRight(c, "/") + "/" + p + "/_build/results?buildId=" + id, "BUILD_BUILDID"}
	}
	r.set(&i.Attempt, number, "SYSTEM_JOBATTEMPT")
}

// bitbucket: https://support.atlassian.com/bitbucket-cloud/docs/variables-and-secrets/
// (BITBUCKET_GIT_HTTP_ORIGIN, BITBUCKET_COMMIT, BITBUCKET_BRANCH,
// BITBUCKET_PR_ID, BITBUCKET_PR_DESTINATION_BRANCH,
// BITBUCKET_BUILD_NUMBER, BITBUCKET_STEP_RUN_NUMBER: the times a step has
// run in its pipeline, more than 1 once its failed steps are rerun).
func bitbucket(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "BITBUCKET_GIT_HTTP_ORIGIN")
	r.set(&i.SHA, nil, "BITBUCKET_COMMIT")
	r.set(&i.Branch, nil, "BITBUCKET_BRANCH")
	r.set(&i.PR, number, "BITBUCKET_PR_ID")
	r.set(&i.Base, nil, "BITBUCKET_PR_DESTINATION_BRANCH")
	if o, n := r.get("BITBUCKET_GIT_HTTP_ORIGIN"), r.get("BITBUCKET_BUILD_NUMBER"); o != "" && n != "" {
		o = strings.Replace(o, "http://", "https://", 1)
		i.JobURL = Value{strings.TrimRight(o, "/") + "/pipelines/results/" + n, "BITBUCKET_BUILD_NUMBER"}
	}
	r.set(&i.Attempt, number, "BITBUCKET_STEP_RUN_NUMBER")
}

// jenkins: the variables Jenkins lists at ${JENKINS_URL}env-vars.html
// (JENKINS_URL, BUILD_URL; multibranch BRANCH_NAME, CHANGE_ID,
// CHANGE_BRANCH, CHANGE_TARGET) and those its Git plugin adds (GIT_URL,
// GIT_COMMIT, GIT_BRANCH). For a pull request BRANCH_NAME is Jenkins's
// own ("PR-24"): CHANGE_BRANCH is the real one. A replay is a new build.
func jenkins(r *reader) {
	i := &r.info
	r.set(&i.RepoURL, nil, "GIT_URL")
	r.set(&i.SHA, nil, "GIT_COMMIT")
	r.set(&i.Branch, nil, "CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH")
	i.Branch = branchName(i.Branch)
	r.set(&i.PR, number, "CHANGE_ID")
	r.set(&i.Base, nil, "CHANGE_TARGET")
	r.set(&i.JobURL, nil, "BUILD_URL")
}
