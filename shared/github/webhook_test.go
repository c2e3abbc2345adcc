package github_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
)

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	const secret, body = "s3cret", `{"action":"closed"}`
	good := sign(secret, body)
	cases := []struct {
		name         string
		secret, body string
		header       string
		want         bool
	}{
		{"good", secret, body, good, true},
		{"tampered body", secret, `{"action":"opened"}`, good, false},
		{"wrong secret", "other", body, good, false},
		{"missing header", secret, body, "", false},
		{"sha1 header", secret, body, "sha1=" + good[len("sha256="):], false},
		{"not hex", secret, body, "sha256=zz", false},
		{"truncated", secret, body, good[:len(good)-2], false},
		{"empty secret", "", body, sign("", body), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := github.VerifySignature([]byte(tc.secret), []byte(tc.body), tc.header); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// receiver records the webhook deliveries it gets, verified and parsed.
type receiver struct {
	mu     sync.Mutex
	events []github.Event
	ids    map[string]bool
	bad    []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := req.Header.Get("X-GitHub-Delivery")
	if !github.VerifySignature([]byte("hook-secret"), body, req.Header.Get("X-Hub-Signature-256")) || id == "" || r.ids[id] {
		r.bad = append(r.bad, id)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.ids[id] = true
	ev, err := github.ParseEvent(req.Header.Get("X-GitHub-Event"), body)
	if err != nil {
		r.bad = append(r.bad, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.events = append(r.events, ev)
}

// The sim's own deliveries, parsed: every event kind the queue reacts to,
// signed, with the fields the queue reads.
func TestSimWebhooksParse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rcv := &receiver{ids: map[string]bool{}}
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	f.sim.SetWebhook(hs.URL, "hook-secret")

	if _, err := f.sim.CreateBranch(fullName, "release", "main"); err != nil {
		t.Fatal(err)
	}
	n, sha1 := f.openPR(t, "feature", "a.txt", "a\n")
	sha2, err := f.sim.PushPR(fullName, n, "a.txt", "a2\n", "Fix")
	must(t, err)
	must(t, f.sim.ConvertToDraft(fullName, n))
	must(t, f.sim.ChangeBase(fullName, n, "release"))
	must(t, f.sim.ClosePR(fullName, n))
	must(t, f.sim.ReopenPR(fullName, n))
	must(t, f.sim.ReadyForReview(fullName, n))
	must(t, f.sim.SetStatus(fullName, sha2, "ci/test", "failure", "", ""))
	must(t, f.sim.SetCheckRun(fullName, sha2, "build", "completed", "success", ""))
	merged, err := f.sim.MergePR(fullName, n, "squash")
	must(t, err)
	f.sim.Flush()

	pr := func(action string, head string, base string) github.Event {
		return github.Event{Kind: "pull_request", Action: action, Repo: repo, PR: n, HeadSHA: head, HeadRef: "feature", BaseRef: base, UpdatedAt: f.clock.Now()}
	}
	push := func(ref, before, after string) github.Event {
		return github.Event{Kind: "push", Repo: repo, Ref: "refs/heads/" + ref, Before: before, After: after, Created: before == "0000000000000000000000000000000000000000"}
	}
	zero := "0000000000000000000000000000000000000000"
	draft := pr("converted_to_draft", sha2, "main")
	draft.Draft = true
	edited := pr("edited", sha2, "release")
	edited.Draft, edited.BaseChangedFrom = true, "main"
	closed := pr("closed", sha2, "release")
	closed.Draft = true
	reopened := pr("reopened", sha2, "release")
	reopened.Draft = true
	mergedEv := pr("closed", sha2, "release")
	mergedEv.Merged, mergedEv.MergeCommitSHA = true, merged
	want := []github.Event{
		push("release", zero, f.base),
		push("feature", zero, sha1),
		pr("opened", sha1, "main"),
		pr("synchronize", sha2, "main"),
		push("feature", sha1, sha2),
		draft,
		edited,
		closed,
		reopened,
		pr("ready_for_review", sha2, "release"),
		{Kind: "status", Repo: repo, SHA: sha2, Context: "ci/test", State: "failure", Branches: []string{"feature"}},
		{Kind: "check_run", Action: "completed", Repo: repo, SHA: sha2, Context: "build", State: "success", Branches: []string{"feature"}, PRs: []int{n}},
		{Kind: "check_suite", Action: "completed", Repo: repo, SHA: sha2, State: "success", Branches: []string{"feature"}, PRs: []int{n}},
		mergedEv,
		push("release", f.base, merged),
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bad) > 0 {
		t.Errorf("refused deliveries: %v", rcv.bad)
	}
	if diff := cmp.Diff(rcv.events, want, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(github.Event{}, "Sender")); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// Comments and labels, parsed: who commented what on which pull request
// (or issue), and which label who added or removed.
func TestSimSurfaceWebhooksParse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	n, sha := f.openPR(t, "feature", "a.txt", "a\n")
	issue, err := f.sim.OpenIssue(fullName, "A bug", "octocat")
	must(t, err)
	rcv := &receiver{ids: map[string]bool{}}
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	f.sim.SetWebhook(hs.URL, "hook-secret")
	id, err := f.sim.AddComment(fullName, n, "maintainer", "/trunk merge")
	must(t, err)
	_, err = f.sim.AddComment(fullName, issue, "octocat", "/mainguard merge")
	must(t, err)
	must(t, f.sim.AddLabel(fullName, n, "maintainer", "mainguard-merge"))
	must(t, f.sim.RemoveLabel(fullName, n, "maintainer", "mainguard-merge"))
	f.sim.Flush()
	label := func(action string) github.Event {
		return github.Event{Kind: "pull_request", Action: action, Repo: repo, PR: n, HeadSHA: sha, HeadRef: "feature", BaseRef: "main",
			Sender: "maintainer", Label: "mainguard-merge", UpdatedAt: f.clock.Now()}
	}
	want := []github.Event{
		{Kind: "issue_comment", Action: "created", Repo: repo, Sender: "maintainer", PR: n, IsPR: true, CommentID: id, CommentBody: "/trunk merge", UpdatedAt: f.clock.Now()},
		{Kind: "issue_comment", Action: "created", Repo: repo, Sender: "octocat", PR: issue, CommentID: id + 1, CommentBody: "/mainguard merge", UpdatedAt: f.clock.Now()},
		label("labeled"),
		label("unlabeled"),
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if diff := cmp.Diff(rcv.events, want, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseEventEdges(t *testing.T) {
	t.Parallel()
	ev, err := github.ParseEvent("ping", []byte(`{"zen":"x"}`))
	if err != nil || !ev.Ignored || ev.Kind != "ping" {
		t.Errorf("ping: %+v, %v; want ignored", ev, err)
	}
	if _, err := github.ParseEvent("pull_request", []byte(`{`)); !errs.Is(err, errs.Invalid) {
		t.Errorf("malformed: %v, want invalid", err)
	}
	if _, err := github.ParseEvent("pull_request", []byte(`{"action":"closed","repository":{"name":"app","owner":{"login":"acme"}}}`)); !errs.Is(err, errs.Invalid) {
		t.Errorf("no pull_request: %v, want invalid", err)
	}
	suite := `{"action":"completed","check_suite":{"head_branch":"trunk-merge/pr-1/x","head_sha":"abc","status":"completed","conclusion":"failure","pull_requests":[{"number":3}]},"repository":{"full_name":"acme/app"}}`
	ev, err = github.ParseEvent("check_suite", []byte(suite))
	if err != nil {
		t.Fatal(err)
	}
	want := github.Event{Kind: "check_suite", Action: "completed", Repo: repo, SHA: "abc", State: "failure", Branches: []string{"trunk-merge/pr-1/x"}, PRs: []int{3}}
	if diff := cmp.Diff(ev, want); diff != "" {
		t.Errorf("check_suite (-got +want):\n%s", diff)
	}
}
