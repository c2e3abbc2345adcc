package githubsim_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// The answers GitHub gives that a kinder server would not, as goldens:
// rulesets, the branch's protection summary, check suites, Apps, and the
// 405 and 422 refusals.
func TestStrictWireShapes(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	m := must[string](t)
	head := m(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	must[int](t)(s.OpenPR(fullName, "feature", "main", "Add a", "octocat"))
	s.AddApp(77, "other-ci")
	if err := s.SetBranchProtection(fullName, "main", &githubsim.Protection{Checks: []githubsim.RequiredCheck{{Context: "build", AppID: githubsim.CIAppID}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRuleset(fullName, githubsim.Ruleset{Name: "main", Checks: []githubsim.RequiredCheck{{Context: "ci"}}, Strict: true, NoDeletion: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddOrgRuleset("acme", githubsim.Ruleset{Name: "org", Include: []string{"~ALL"}, Checks: []githubsim.RequiredCheck{{Context: "lint", AppID: 77}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRuleset(fullName, githubsim.Ruleset{Name: "off", Enforcement: "evaluate", Checks: []githubsim.RequiredCheck{{Context: "never"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCheckRun(fullName, head, "build", "completed", "success", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCheckRunFrom(77, fullName, head, "lint", "in_progress", "", "https://lint.example/1"); err != nil {
		t.Fatal(err)
	}

	golden(t, "pull_get_first_read", call(t, s, "GET", "/repos/acme/app/pulls/1", ""))
	golden(t, "pull_get_blocked", call(t, s, "GET", "/repos/acme/app/pulls/1", ""))
	golden(t, "rules_branch_main", call(t, s, "GET", "/repos/acme/app/rules/branches/main", ""))
	golden(t, "rules_branch_feature", call(t, s, "GET", "/repos/acme/app/rules/branches/feature", ""))
	golden(t, "branch_get_protected", call(t, s, "GET", "/repos/acme/app/branches/main", ""))
	golden(t, "check_suites", call(t, s, "GET", "/repos/acme/app/commits/"+head+"/check-suites", ""))
	golden(t, "app_get", call(t, s, "GET", "/apps/other-ci", ""))
	golden(t, "pull_merge_405_ruleset_expected", call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"sha":"`+head+`"}`))
	golden(t, "status_422_too_long", call(t, s, "POST", "/repos/acme/app/statuses/"+head,
		`{"state":"done","context":"ci","description":"`+strings.Repeat("é", 141)+`"}`))
	golden(t, "labels_422_too_long", call(t, s, "POST", "/repos/acme/app/issues/1/labels", `{"labels":["`+strings.Repeat("x", 51)+`"]}`))
	golden(t, "body_422_null", call(t, s, "POST", "/repos/acme/app/statuses/"+head, `null`))
	golden(t, "ref_delete_422_ruleset", call(t, s, "DELETE", "/repos/acme/app/git/refs/heads/main", ""))
}

// A merge is refused, with GitHub's message, while any requirement of
// protection or rulesets is unmet on the head — a check of the wrong App
// does not count — and goes through once all are met.
func TestMergeGate(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	m := must[string](t)
	m(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	n := must[int](t)(s.OpenPR(fullName, "feature", "main", "Add a", "octocat"))
	head := must[githubsim.PullRequest](t)(s.PR(fullName, n)).HeadSHA
	s.AddApp(77, "other-ci")
	if err := s.SetBranchProtection(fullName, "main", &githubsim.Protection{Checks: []githubsim.RequiredCheck{{Context: "build", AppID: githubsim.CIAppID}}, Strict: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddOrgRuleset("acme", githubsim.Ruleset{Checks: []githubsim.RequiredCheck{{Context: "ci"}}}); err != nil {
		t.Fatal(err)
	}
	merge := func() (int, string) {
		a := call(t, s, "PUT", "/repos/acme/app/pulls/1/merge", `{"sha":"`+head+`","merge_method":"squash"}`)
		body, _ := a.Body.(map[string]any)
		msg, _ := body["message"].(string)
		return a.Status, msg
	}
	steps := []struct {
		name   string
		do     func() error
		status int
		msg    string
	}{
		{"nothing reported", nil, 405, `Required status check "build" is expected.`},
		{"build from another App", func() error { return s.SetCheckRunFrom(77, fullName, head, "build", "completed", "success", "") }, 405, `Required status check "build" is expected.`},
		{"build running", func() error { return s.SetCheckRun(fullName, head, "build", "in_progress", "", "") }, 405, `Required status check "build" is pending.`},
		{"build failed", func() error { return s.SetCheckRun(fullName, head, "build", "completed", "failure", "") }, 405, `Required status check "build" is failing.`},
		{"build passed", func() error { return s.SetCheckRun(fullName, head, "build", "completed", "success", "") }, 405, "Repository rule violations found\n\nRequired status check \"ci\" is expected.\n\n"},
		{"ci failed", func() error { return s.SetStatus(fullName, head, "ci", "failure", "", "") }, 405, "Repository rule violations found\n\nRequired status check \"ci\" is failing.\n\n"},
		{"ci passed, main moved on", func() error {
			if err := s.SetStatus(fullName, head, "ci", "success", "", ""); err != nil {
				return err
			}
			_, err := s.CommitFile(fullName, "main", "b.txt", "b\n", "Main moves")
			return err
		}, 405, "Head branch is out of date. Review and try the merge again."},
		{"not strict", func() error {
			return s.SetBranchProtection(fullName, "main", &githubsim.Protection{Checks: []githubsim.RequiredCheck{{Context: "build", AppID: githubsim.CIAppID}}})
		}, 200, "Pull Request successfully merged"},
	}
	for _, st := range steps {
		if st.do != nil {
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		if status, msg := merge(); status != st.status || msg != st.msg {
			t.Errorf("%s: merge answered %d %q, want %d %q", st.name, status, msg, st.status, st.msg)
		}
	}
}

// mergeable is null on the first read after any change of head or base,
// and known from the next read on; the first read of an unchanged pull
// request does not start over.
func TestMergeabilityIsComputedAfterARead(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	m := must[string](t)
	m(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	must[int](t)(s.OpenPR(fullName, "feature", "main", "Add a", "octocat"))
	read := func() any {
		body, _ := call(t, s, "GET", "/repos/acme/app/pulls/1", "").Body.(map[string]any)
		return body["mergeable"]
	}
	var got []any
	got = append(got, read(), read(), read())
	m(s.CommitFile(fullName, "feature", "a.txt", "a2\n", "Push"))
	got = append(got, read(), read())
	m(s.CommitFile(fullName, "main", "a.txt", "main's\n", "Main conflicts"))
	got = append(got, read(), read())
	want := []any{nil, true, true, nil, true, nil, false}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("mergeable on successive reads (-got +want):\n%s", diff)
	}
}

// Without a User-Agent GitHub answers 403; every answer carries the rate
// limit, spent per token; the hour's last request is still answered, the
// next is GitHub's primary rate limit, until the reset.
func TestUserAgentAndRateLimit(t *testing.T) {
	t.Parallel()
	clock := fixedNow()
	s := newSim(t, githubsim.Options{Now: func() time.Time { return clock }})
	req, err := http.NewRequest("GET", s.URL()+"/repos/acme/app/git/ref/heads/main", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "User-Agent") {
		t.Errorf("no User-Agent: %d %s", resp.StatusCode, body)
	}

	get := func() *http.Response {
		t.Helper()
		resp, err := http.Get(s.URL() + "/repos/acme/app/git/ref/heads/main")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	first := get()
	reset := first.Header.Get("X-RateLimit-Reset")
	if got := [4]string{first.Header.Get("X-RateLimit-Limit"), first.Header.Get("X-RateLimit-Remaining"), first.Header.Get("X-RateLimit-Used"), first.Header.Get("X-RateLimit-Resource")}; got != [4]string{"60", "59", "1", "core"} {
		t.Errorf("unauthenticated first answer: limit, remaining, used, resource = %v", got)
	}
	for range 59 {
		get()
	}
	if r := get(); r.StatusCode != 403 || r.Header.Get("X-RateLimit-Remaining") != "0" || r.Header.Get("X-RateLimit-Reset") != reset {
		t.Errorf("61st request: %d remaining %s reset %s (want 403, 0, %s)", r.StatusCode, r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"), reset)
	}
	clock = clock.Add(time.Hour)
	if r := get(); r.StatusCode != 200 || r.Header.Get("X-RateLimit-Remaining") != "59" {
		t.Errorf("after the reset: %d remaining %s", r.StatusCode, r.Header.Get("X-RateLimit-Remaining"))
	}
}

// A go-github client reads the ruleset rules as GitHub's documented
// shape: the rules of the repository's and the organization's active
// rulesets, with their sources.
func TestRulesDecodeWithGoGitHub(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	id := must[int64](t)
	repoID := id(s.AddRuleset(fullName, githubsim.Ruleset{Include: []string{"refs/heads/rel/*"}, Checks: []githubsim.RequiredCheck{{Context: "ci", AppID: 9}}, Strict: true}))
	orgID := id(s.AddOrgRuleset("acme", githubsim.Ruleset{Include: []string{"~ALL"}, Exclude: []string{"refs/heads/rel/old"}, Checks: []githubsim.RequiredCheck{{Context: "lint"}}}))
	id(s.AddOrgRuleset("other", githubsim.Ruleset{Include: []string{"~ALL"}, Checks: []githubsim.RequiredCheck{{Context: "theirs"}}}))
	c, err := gh.NewClient(gh.WithURLs(new(s.URL()+"/"), new(s.URL()+"/")))
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Source string
		ID     int64
		Checks string
		Strict bool
	}
	rules := func(branch string) []rule {
		rs, _, err := c.Repositories.ListRulesForBranch(context.Background(), "acme", "app", branch, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []rule
		for _, r := range rs.RequiredStatusChecks {
			var names []string
			for _, c := range r.Parameters.RequiredStatusChecks {
				from := "any"
				if c.IntegrationID != nil {
					from = "app"
				}
				names = append(names, c.Context+"@"+from)
			}
			out = append(out, rule{string(r.RulesetSourceType) + ":" + r.RulesetSource, r.RulesetID, strings.Join(names, ","), r.Parameters.StrictRequiredStatusChecksPolicy})
		}
		return out
	}
	want := []rule{{"Repository:acme/app", repoID, "ci@app", true}, {"Organization:acme", orgID, "lint@any", false}}
	if diff := cmp.Diff(rules("rel/1"), want); diff != "" {
		t.Errorf("rules of rel/1 (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(rules("rel/old"), want[:1]); diff != "" {
		t.Errorf("rules of rel/old, excluded by the organization (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(rules("main"), want[1:]); diff != "" {
		t.Errorf("rules of main (-got +want):\n%s", diff)
	}
}

// Every delivery carries the headers GitHub sends, both signatures
// verifying; an App's deliveries name the App as their target and carry
// its installation, and a check suite whose runs all completed is
// announced.
func TestWebhookHeaders(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{App: &githubsim.App{ID: 42, InstallationID: 7}})
	type got struct {
		hdr  http.Header
		body []byte
	}
	var gots []got
	url := newReceiver(t, func(r *http.Request, b []byte) { gots = append(gots, got{r.Header.Clone(), b}) })
	s.SetWebhook(url, "sec")
	sha := must[string](t)(s.CommitFile(fullName, "feature", "a.txt", "a\n", "A"))
	if err := s.SetCheckRun(fullName, sha, "build", "completed", "success", ""); err != nil {
		t.Fatal(err)
	}
	s.Flush()
	var events []string
	for _, g := range gots {
		h := g.hdr
		events = append(events, h.Get("X-GitHub-Event"))
		mac := hmac.New(sha1.New, []byte("sec"))
		mac.Write(g.body)
		if h.Get("X-Hub-Signature") != "sha1="+hex.EncodeToString(mac.Sum(nil)) || !github.VerifySignature([]byte("sec"), g.body, h.Get("X-Hub-Signature-256")) {
			t.Errorf("%s: signatures do not verify", h.Get("X-GitHub-Event"))
		}
		for k, want := range map[string]string{
			"Content-Type": "application/json", "X-GitHub-Hook-Installation-Target-Type": "integration",
			"X-GitHub-Hook-Installation-Target-ID": "42", "X-GitHub-Hook-ID": "1",
		} {
			if h.Get(k) != want {
				t.Errorf("%s: %s = %q, want %q", h.Get("X-GitHub-Event"), k, h.Get(k), want)
			}
		}
		if !strings.HasPrefix(h.Get("User-Agent"), "GitHub-Hookshot/") || h.Get("X-GitHub-Delivery") == "" {
			t.Errorf("%s: User-Agent %q, delivery %q", h.Get("X-GitHub-Event"), h.Get("User-Agent"), h.Get("X-GitHub-Delivery"))
		}
		if !strings.Contains(string(g.body), `"installation":{"id":7,`) {
			t.Errorf("%s: no installation in %s", h.Get("X-GitHub-Event"), g.body)
		}
		if h.Get("X-GitHub-Event") == "check_run" && !strings.Contains(string(g.body), `"details_url":"https://`) {
			t.Errorf("check_run without details_url: %s", g.body)
		}
	}
	if diff := cmp.Diff(events, []string{"push", "check_run", "check_suite"}); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// A body of the wrong JSON type is GitHub's 422, naming the field when one
// is of the wrong type; what is not JSON is 400.
func TestBodiesOfTheWrongType(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{})
	head := must[string](t)(s.BranchHead(fullName, "main"))
	for _, c := range []struct {
		body   string
		status int
		msg    string
	}{
		{`null`, 422, "Invalid request.\n\nFor 'links/0/schema', nil is not an object."},
		{`[1]`, 422, "Invalid request.\n\nFor 'links/0/schema', [1] is not an object."},
		{`{"state":5}`, 422, "Invalid request.\n\nFor 'properties/state', number is not a string."},
		{`{"state":`, 400, "Problems parsing JSON"},
	} {
		got := call(t, s, "POST", "/repos/acme/app/statuses/"+head, c.body)
		body, _ := got.Body.(map[string]any)
		if got.Status != c.status || body["message"] != c.msg {
			t.Errorf("%s: %d %q, want %d %q", c.body, got.Status, body["message"], c.status, c.msg)
		}
	}
}
