package ciinfo

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// want is what a case must detect: repository (HOST/OWNER/NAME), commit,
// branch, pull request, target branch and attempt, and where the commit
// came from.
type want struct {
	CI, Repo, SHA, Branch, PR, Base, Attempt, SHAFrom string
}

// event is GitHub's pull_request event payload, as GITHUB_EVENT_PATH holds
// it (only the fields read).
const event = `{"action":"synchronize","number":17,"pull_request":{"number":17,
 "head":{"ref":"feature/login","sha":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
 "base":{"ref":"main","sha":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}}`

// TestDetect is the CI-detection table: each CI's documented variables
// (sources cited in ciinfo.go beside each reader) as it sets them for a
// push, a pull request and a re-run of the same job. A re-run must name
// the same repository and commit as the first attempt, so that the
// service sees a retry of that commit; GitHub's pull request commit is
// the head from the event payload, not the merge commit in GITHUB_SHA.
func TestDetect(t *testing.T) {
	t.Parallel()
	const sha, merge = "1f0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "9999999999999999999999999999999999999999"
	gha := map[string]string{"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": "acme/web", "GITHUB_RUN_ID": "1658821493", "GITHUB_RUN_ATTEMPT": "1"}
	cases := []struct {
		name string
		env  map[string]string
		want want
	}{
		{"github push", with(gha, "GITHUB_EVENT_NAME", "push", "GITHUB_SHA", sha, "GITHUB_REF", "refs/heads/main", "GITHUB_REF_NAME", "main"),
			want{"GitHub Actions", "github.com/acme/web", sha, "main", "", "", "1", "GITHUB_SHA"}},
		{"github pull request", with(gha, "GITHUB_EVENT_NAME", "pull_request", "GITHUB_SHA", merge, "GITHUB_REF", "refs/pull/17/merge",
			"GITHUB_HEAD_REF", "feature/login", "GITHUB_BASE_REF", "main", "GITHUB_EVENT_PATH", "/event.json"),
			want{"GitHub Actions", "github.com/acme/web", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "feature/login", "17", "main", "1", "GITHUB_EVENT_PATH"}},
		{"github re-run of the pull request", with(gha, "GITHUB_EVENT_NAME", "pull_request", "GITHUB_SHA", merge, "GITHUB_REF", "refs/pull/17/merge",
			"GITHUB_HEAD_REF", "feature/login", "GITHUB_BASE_REF", "main", "GITHUB_EVENT_PATH", "/event.json", "GITHUB_RUN_ATTEMPT", "2"),
			want{"GitHub Actions", "github.com/acme/web", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "feature/login", "17", "main", "2", "GITHUB_EVENT_PATH"}},
		{"github pull request without its payload", with(gha, "GITHUB_SHA", merge, "GITHUB_REF", "refs/pull/17/merge", "GITHUB_HEAD_REF", "feature/login", "GITHUB_BASE_REF", "main"),
			want{"GitHub Actions", "github.com/acme/web", merge, "feature/login", "17", "main", "1", "GITHUB_SHA"}},
		{"github enterprise", with(gha, "GITHUB_SERVER_URL", "https://ghe.acme.example", "GITHUB_SHA", sha, "GITHUB_REF", "refs/heads/release/1.2"),
			want{"GitHub Actions", "ghe.acme.example/acme/web", sha, "release/1.2", "", "", "1", "GITHUB_SHA"}},

		{"gitlab push", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.com/acme/platform/web", "CI_COMMIT_SHA": sha,
			"CI_COMMIT_BRANCH": "main", "CI_COMMIT_REF_NAME": "main", "CI_JOB_URL": "https://gitlab.com/acme/platform/web/-/jobs/42",
			"CI_REPOSITORY_URL": "https://gitlab-ci-token:glcbt-secret@gitlab.com/acme/platform/web.git"},
			want{"GitLab CI", "gitlab.com/acme/platform/web", sha, "main", "", "", "", "CI_COMMIT_SHA"}},
		{"gitlab merge request", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.com/acme/web", "CI_COMMIT_SHA": sha,
			"CI_COMMIT_REF_NAME": "feature/login", "CI_MERGE_REQUEST_IID": "8", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/login",
			"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_JOB_URL": "https://gitlab.com/acme/web/-/jobs/43"},
			want{"GitLab CI", "gitlab.com/acme/web", sha, "feature/login", "8", "main", "", "CI_COMMIT_SHA"}},
		{"gitlab merged results, retried", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.com/acme/web", "CI_COMMIT_SHA": merge,
			"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": sha, "CI_MERGE_REQUEST_IID": "8", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature/login",
			"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_JOB_RETRY_COUNT": "1"},
			want{"GitLab CI", "gitlab.com/acme/web", sha, "feature/login", "8", "main", "2", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"}},

		{"buildkite push", map[string]string{"BUILDKITE": "true", "BUILDKITE_REPO": "git@github.com:acme/web.git", "BUILDKITE_COMMIT": sha,
			"BUILDKITE_BRANCH": "main", "BUILDKITE_PULL_REQUEST": "false", "BUILDKITE_BUILD_URL": "https://buildkite.com/acme/web/builds/7",
			"BUILDKITE_JOB_ID": "d593f546", "BUILDKITE_RETRY_COUNT": "0"},
			want{"Buildkite", "github.com/acme/web", sha, "main", "", "", "1", "BUILDKITE_COMMIT"}},
		{"buildkite pull request", map[string]string{"BUILDKITE": "true", "BUILDKITE_REPO": "https://github.com/acme/web.git", "BUILDKITE_COMMIT": sha,
			"BUILDKITE_BRANCH": "feature/login", "BUILDKITE_PULL_REQUEST": "17", "BUILDKITE_PULL_REQUEST_BASE_BRANCH": "main", "BUILDKITE_RETRY_COUNT": "0"},
			want{"Buildkite", "github.com/acme/web", sha, "feature/login", "17", "main", "1", "BUILDKITE_COMMIT"}},
		{"buildkite retry", map[string]string{"BUILDKITE": "true", "BUILDKITE_REPO": "https://github.com/acme/web.git", "BUILDKITE_COMMIT": sha,
			"BUILDKITE_BRANCH": "feature/login", "BUILDKITE_PULL_REQUEST": "17", "BUILDKITE_PULL_REQUEST_BASE_BRANCH": "main", "BUILDKITE_RETRY_COUNT": "2"},
			want{"Buildkite", "github.com/acme/web", sha, "feature/login", "17", "main", "3", "BUILDKITE_COMMIT"}},

		{"circleci push", map[string]string{"CIRCLECI": "true", "CIRCLE_REPOSITORY_URL": "git@github.com:acme/web.git", "CIRCLE_SHA1": sha,
			"CIRCLE_BRANCH": "main", "CIRCLE_BUILD_URL": "https://app.circleci.com/pipelines/github/acme/web/9/workflows/w/jobs/31"},
			want{"CircleCI", "github.com/acme/web", sha, "main", "", "", "", "CIRCLE_SHA1"}},
		{"circleci pull request", map[string]string{"CIRCLECI": "true", "CIRCLE_REPOSITORY_URL": "git@github.com:acme/web.git", "CIRCLE_SHA1": sha,
			"CIRCLE_BRANCH": "feature/login", "CIRCLE_PULL_REQUEST": "https://github.com/acme/web/pull/17"},
			want{"CircleCI", "github.com/acme/web", sha, "feature/login", "17", "", "", "CIRCLE_SHA1"}},
		{"circleci rerun from a fork", map[string]string{"CIRCLECI": "true", "CIRCLE_REPOSITORY_URL": "git@github.com:acme/web.git", "CIRCLE_SHA1": sha,
			"CIRCLE_BRANCH": "pull/17", "CIRCLE_PR_NUMBER": "17", "CIRCLE_PULL_REQUEST": "https://github.com/acme/web/pull/17", "CIRCLE_BUILD_NUM": "32"},
			want{"CircleCI", "github.com/acme/web", sha, "pull/17", "17", "", "", "CIRCLE_SHA1"}},

		{"jenkins branch", map[string]string{"JENKINS_URL": "https://ci.acme.example/", "BUILD_URL": "https://ci.acme.example/job/web/job/main/5/",
			"GIT_URL": "https://github.com/acme/web.git", "GIT_COMMIT": sha, "BRANCH_NAME": "main", "GIT_BRANCH": "origin/main"},
			want{"Jenkins", "github.com/acme/web", sha, "main", "", "", "", "GIT_COMMIT"}},
		{"jenkins pull request", map[string]string{"JENKINS_URL": "https://ci.acme.example/", "BUILD_URL": "https://ci.acme.example/job/web/job/PR-17/1/",
			"GIT_URL": "https://github.com/acme/web.git", "GIT_COMMIT": sha, "BRANCH_NAME": "PR-17", "CHANGE_ID": "17",
			"CHANGE_BRANCH": "feature/login", "CHANGE_TARGET": "main"},
			want{"Jenkins", "github.com/acme/web", sha, "feature/login", "17", "main", "", "GIT_COMMIT"}},
		{"jenkins replay", map[string]string{"JENKINS_URL": "https://ci.acme.example/", "BUILD_URL": "https://ci.acme.example/job/web/job/PR-17/2/",
			"GIT_URL": "https://ci:hunter2@github.com/acme/web.git", "GIT_COMMIT": sha, "BRANCH_NAME": "PR-17", "CHANGE_ID": "17",
			"CHANGE_BRANCH": "feature/login", "CHANGE_TARGET": "main"},
			want{"Jenkins", "github.com/acme/web", sha, "feature/login", "17", "main", "", "GIT_COMMIT"}},

		{"azure push", map[string]string{"TF_BUILD": "True", "BUILD_REPOSITORY_URI": "https://github.com/acme/web", "BUILD_SOURCEVERSION": sha,
			"BUILD_SOURCEBRANCH": "refs/heads/release/1.2", "BUILD_SOURCEBRANCHNAME": "1.2", "SYSTEM_COLLECTIONURI": "https://dev.azure.com/acme/",
			"SYSTEM_TEAMPROJECT": "web", "BUILD_BUILDID": "812", "SYSTEM_JOBATTEMPT": "1"},
			want{"Azure Pipelines", "github.com/acme/web", sha, "release/1.2", "", "", "1", "BUILD_SOURCEVERSION"}},
		{"azure pull request", map[string]string{"TF_BUILD": "True", "BUILD_REPOSITORY_URI": "https://github.com/acme/web", "BUILD_SOURCEVERSION": merge,
			"BUILD_SOURCEBRANCH": "refs/pull/17/merge", "SYSTEM_PULLREQUEST_PULLREQUESTNUMBER": "17", "SYSTEM_PULLREQUEST_PULLREQUESTID": "512",
			"SYSTEM_PULLREQUEST_SOURCEBRANCH": "feature/login", "SYSTEM_PULLREQUEST_TARGETBRANCH": "refs/heads/main",
			"SYSTEM_PULLREQUEST_SOURCECOMMITID": sha, "SYSTEM_JOBATTEMPT": "1"},
			want{"Azure Pipelines", "github.com/acme/web", sha, "feature/login", "17", "main", "1", "SYSTEM_PULLREQUEST_SOURCECOMMITID"}},
		{"azure retried job", map[string]string{"TF_BUILD": "True", "BUILD_REPOSITORY_URI": "https://github.com/acme/web", "BUILD_SOURCEVERSION": merge,
			"SYSTEM_PULLREQUEST_PULLREQUESTNUMBER": "17", "SYSTEM_PULLREQUEST_SOURCEBRANCH": "feature/login", "SYSTEM_PULLREQUEST_TARGETBRANCH": "main",
			"SYSTEM_PULLREQUEST_SOURCECOMMITID": sha, "SYSTEM_JOBATTEMPT": "2"},
			want{"Azure Pipelines", "github.com/acme/web", sha, "feature/login", "17", "main", "2", "SYSTEM_PULLREQUEST_SOURCECOMMITID"}},

		{"bitbucket push", map[string]string{"CI": "true", "BITBUCKET_BUILD_NUMBER": "51", "BITBUCKET_GIT_HTTP_ORIGIN": "http://bitbucket.org/acme/web",
			"BITBUCKET_COMMIT": sha, "BITBUCKET_BRANCH": "main", "BITBUCKET_STEP_RUN_NUMBER": "1"},
			want{"Bitbucket Pipelines", "bitbucket.org/acme/web", sha, "main", "", "", "1", "BITBUCKET_COMMIT"}},
		{"bitbucket pull request", map[string]string{"CI": "true", "BITBUCKET_BUILD_NUMBER": "52", "BITBUCKET_GIT_HTTP_ORIGIN": "http://bitbucket.org/acme/web",
			"BITBUCKET_COMMIT": sha, "BITBUCKET_BRANCH": "feature/login", "BITBUCKET_PR_ID": "17", "BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_STEP_RUN_NUMBER": "1"},
			want{"Bitbucket Pipelines", "bitbucket.org/acme/web", sha, "feature/login", "17", "main", "1", "BITBUCKET_COMMIT"}},
		{"bitbucket rerun of failed steps", map[string]string{"CI": "true", "BITBUCKET_BUILD_NUMBER": "52", "BITBUCKET_GIT_HTTP_ORIGIN": "http://bitbucket.org/acme/web",
			"BITBUCKET_COMMIT": sha, "BITBUCKET_BRANCH": "feature/login", "BITBUCKET_PR_ID": "17", "BITBUCKET_PR_DESTINATION_BRANCH": "main", "BITBUCKET_STEP_RUN_NUMBER": "2"},
			want{"Bitbucket Pipelines", "bitbucket.org/acme/web", sha, "feature/login", "17", "main", "2", "BITBUCKET_COMMIT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			info := Detect(Env{
				Getenv: func(k string) string { return c.env[k] },
				ReadFile: func(name string) ([]byte, error) {
					if name == "/event.json" {
						return []byte(event), nil
					}
					return nil, os.ErrNotExist
				},
				Git: func(...string) (string, error) { return "", errors.New("no git here") },
			})
			ref, err := info.Repo()
			if err != nil {
				t.Fatalf("repository: %v (%q)", err, info.RepoURL.Value)
			}
			got := want{info.CI, ref.String(), info.SHA.Value, info.Branch.Value, info.PR.Value, info.Base.Value, info.Attempt.Value, info.SHA.From}
			if d := cmp.Diff(got, c.want); d != "" {
				t.Errorf("detected (-got +want):\n%s", d)
			}
			for name, v := range info.Envs {
				for _, secret := range []string{"glcbt-secret", "hunter2"} {
					if strings.Contains(v, secret) || strings.Contains(info.RepoURL.Value, secret) {
						t.Errorf("%s keeps a credential: %q", name, v)
					}
				}
			}
		})
	}
}

// with is base with more variables, as key, value pairs.
func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestGitFallback: outside a known CI, everything comes from the checkout;
// inside one, git fills only what the CI left out.
func TestGitFallback(t *testing.T) {
	t.Parallel()
	git := func(args ...string) (string, error) {
		switch args[0] {
		case "rev-parse":
			return "cccccccccccccccccccccccccccccccccccccccc", nil
		case "symbolic-ref":
			return "topic", nil
		case "remote":
			return "https://bot:tok@github.com/acme/web.git", nil
		}
		return "", errors.New("unexpected")
	}
	info := Detect(Env{Getenv: func(string) string { return "" }, Git: git})
	ref, err := info.Repo()
	if info.CI != "" || err != nil || ref.String() != "github.com/acme/web" || info.SHA != (Value{"cccccccccccccccccccccccccccccccccccccccc", "git"}) ||
		info.Branch != (Value{"topic", "git"}) || strings.Contains(info.RepoURL.Value, "tok") {
		t.Errorf("from git: %+v %v", info, err)
	}
	env := map[string]string{"CIRCLECI": "true", "CIRCLE_SHA1": "dddddddddddddddddddddddddddddddddddddddd"}
	info = Detect(Env{Getenv: func(k string) string { return env[k] }, Git: git})
	if info.SHA.From != "CIRCLE_SHA1" || info.Branch.From != "git" || info.RepoURL.From != "git" {
		t.Errorf("CI first, git after: %+v", info)
	}
}
