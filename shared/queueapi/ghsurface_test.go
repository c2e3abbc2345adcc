package queueapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/queueapi"
)

// The queue's GitHub surface, end to end: the simulated GitHub delivers
// its issue_comment and pull_request (labeled, unlabeled) webhooks, signed,
// to the webhook endpoint, and the tests read back what the queue did on
// GitHub (comments, reactions, labels, pull requests).

const marker = "<!-- mainguard:queue="

// hooks makes the simulated GitHub deliver its comment and label webhooks
// to the service (the other kinds are dropped: the tests tick instead).
// Deliveries are synchronous with Flush.
func (e *env) hooks() {
	e.tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(body, &p)
		ev := r.Header.Get("X-GitHub-Event")
		if ev != "issue_comment" && !(ev == "pull_request" && (p.Action == "labeled" || p.Action == "unlabeled")) {
			return
		}
		code, resp := e.webhook(ev, r.Header.Get("X-GitHub-Delivery"), body, r.Header.Get("X-Hub-Signature-256"))
		if code != http.StatusOK {
			e.tb.Errorf("webhook %s: %d %s", ev, code, resp)
		}
		w.WriteHeader(code)
	}))
	e.tb.Cleanup(srv.Close)
	e.Sim.SetWebhook(srv.URL, webhookSecret)
	for _, u := range []string{"maint"} {
		if err := e.Sim.SetPermission(repoFull, u, "write"); err != nil {
			e.tb.Fatal(err)
		}
	}
}

// comment comments on PR n as user and waits for the delivery.
func (e *env) comment(n int, user, body string) int64 {
	e.tb.Helper()
	id, err := e.Sim.AddComment(repoFull, n, user, body)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.Sim.Flush()
	return id
}

func (e *env) comments(n int) []githubsim.Comment {
	e.tb.Helper()
	cs, err := e.Sim.Comments(repoFull, n)
	if err != nil {
		e.tb.Fatal(err)
	}
	return cs
}

// queueComments are the queue's own comments on PR n (its marker).
func (e *env) queueComments(n int) []githubsim.Comment {
	return slices.DeleteFunc(e.comments(n), func(c githubsim.Comment) bool { return !strings.Contains(c.Body, marker) })
}

// replies are the queue's answers on PR n: its comments without marker.
func (e *env) replies(n int) []string {
	var out []string
	for _, c := range e.comments(n) {
		if c.Author == "githubsim-app[bot]" && !strings.Contains(c.Body, marker) {
			out = append(out, c.Body)
		}
	}
	return out
}

func (e *env) labels(n int) []string {
	e.tb.Helper()
	ls, err := e.Sim.Labels(repoFull, n)
	if err != nil {
		e.tb.Fatal(err)
	}
	return ls
}

func (e *env) submittedCode(n int) int {
	code, _ := e.call("getSubmittedPullRequest", prq(n, nil))
	return code
}

// A /trunk merge comment from a maintainer queues the PR, is acknowledged
// with a reaction, and the PR merges; its one queue comment ends Merged,
// and its commit status links to the PR's page.
func TestTrunkMergeCommentQueuesAndMerges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.hooks()
	n := e.openPR("c1")
	head := e.pr0(n)
	id := e.comment(n, "maint", "LGTM\n/trunk merge")
	if got := e.pr(n).State; got == "" {
		t.Fatal("the comment did not submit the PR")
	}
	e.until(func() bool { return e.pr(n).State == "MERGED" })
	e.tick() // the merged PR's comment is owed after the step that merged it
	cs := e.comments(n)
	if cs[0].ID != id || !slices.Equal(cs[0].Reactions, []string{"+1"}) {
		t.Errorf("the command comment: %+v, want a +1 reaction", cs[0])
	}
	qc := e.queueComments(n)
	if len(qc) != 1 || !strings.Contains(qc[0].Body, "**Merged**") || !strings.Contains(qc[0].Body, "/merge-queue/acme/web/main/pr/1)") {
		t.Errorf("queue comments: %+v", qc)
	}
	if r := e.replies(n); len(r) != 0 {
		t.Errorf("replies to a good command: %q", r)
	}
	if url := e.statusTarget(head); !strings.HasSuffix(url, "/merge-queue/acme/web/main/pr/1") {
		t.Errorf("status target_url = %q, want the PR's page", url)
	}
}

// pr0 is PR n's head as GitHub has it.
func (e *env) pr0(n int) string {
	e.tb.Helper()
	p, err := e.Sim.PR(repoFull, n)
	if err != nil {
		e.tb.Fatal(err)
	}
	return p.HeadSHA
}

// statusTarget is the target_url of the queue's commit status on sha.
func (e *env) statusTarget(sha string) string {
	e.tb.Helper()
	resp, err := http.Get(e.Sim.URL() + "/repos/acme/web/commits/" + sha + "/status")
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	var cs struct {
		Statuses []struct {
			Context   string `json:"context"`
			TargetURL string `json:"target_url"`
		} `json:"statuses"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cs); err != nil {
		e.tb.Fatal(err)
	}
	for _, s := range cs.Statuses {
		if s.Context == "Trunk Merge Queue (main)" {
			return s.TargetURL
		}
	}
	return ""
}

// A command from someone without write access changes nothing: a polite
// refusal, no reaction, nothing queued.
func TestReadOnlyCommandChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.hooks()
	n := e.openPR("r1")
	e.comment(n, "reader", "/mainguard merge")
	if code := e.submittedCode(n); code != http.StatusNotFound {
		t.Errorf("getSubmittedPullRequest after a read-only command: %d, want 404", code)
	}
	r := e.replies(n)
	if len(r) != 1 || !strings.Contains(r[0], "@reader, only people with write access to acme/web") {
		t.Errorf("replies: %q", r)
	}
	if cs := e.comments(n); len(cs[0].Reactions) != 0 {
		t.Errorf("reactions on a refused command: %v", cs[0].Reactions)
	}
}

// The enqueueing label submits a PR and taking it off cancels; with state
// labels on, the PR carries one label naming its state, up to merged.
func TestLabelsSubmitCancelAndFollowTheState(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"labelCommandsEnabled": true, "stateLabelsEnabled": true}), nil)
	e.hooks()
	a, b := e.openPR("l1"), e.openPR("l2")
	for _, n := range []int{a, b} {
		if err := e.Sim.AddLabel(repoFull, n, "maint", "mainguard-merge"); err != nil {
			t.Fatal(err)
		}
	}
	e.Sim.Flush()
	if err := e.Sim.RemoveLabel(repoFull, b, "maint", "mainguard-merge"); err != nil {
		t.Fatal(err)
	}
	e.Sim.Flush()
	if got := e.pr(b).State; got != "CANCELLED" {
		t.Errorf("PR %d after its label was taken off: %s, want CANCELLED", b, got)
	}
	seen := map[string]bool{}
	e.until(func() bool {
		for _, l := range e.labels(a) {
			seen[l] = true
		}
		return e.pr(a).State == "MERGED"
	})
	e.tick()
	state := func(n int) []string {
		return slices.DeleteFunc(e.labels(n), func(l string) bool { return !strings.HasPrefix(l, "mainguard: ") })
	}
	if got := state(a); !slices.Equal(got, []string{"mainguard: merged"}) {
		t.Errorf("state labels of PR %d: %q", a, got)
	}
	if !seen["mainguard: testing"] {
		t.Errorf("PR %d never showed mainguard: testing (saw %v)", a, seen)
	}
	if got := state(b); !slices.Equal(got, []string{"mainguard: cancelled"}) {
		t.Errorf("state labels of PR %d: %q", b, got)
	}
}

// A failed PR's one comment names the reason and the failed check; a
// retry resubmits it, and GitHub failing the comment's edits and losing
// the answer of its creation never makes a second comment.
func TestOneCommentThroughFailureRetryAndFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.hooks()
	n := e.openPR("f1")
	// The first creation is done but its answer lost; the next edits fail.
	e.Sim.InjectFault(githubsim.Fault{Method: "POST", PathPrefix: "/repos/acme/web/issues/1/comments", Kind: githubsim.FaultLoseResponse})
	e.Sim.InjectFault(githubsim.Fault{Method: "PATCH", PathPrefix: "/repos/acme/web/issues/comments/", Kind: githubsim.FaultServerError, Times: 2})
	e.Sim.InjectFault(githubsim.Fault{Method: "PATCH", PathPrefix: "/repos/acme/web/issues/comments/", Kind: githubsim.FaultRateLimit})
	e.comment(n, "maint", "/mainguard merge --no-batch")
	e.until(func() bool { return e.pr(n).State == "FAILED" }, "f1.txt")
	e.until(func() bool {
		qc := e.queueComments(n)
		return len(qc) == 1 && strings.Contains(qc[0].Body, "**Failed**")
	})
	qc := e.queueComments(n)
	if !strings.Contains(qc[0].Body, "TEST_RUN_REQUIRED_STATUS_FAILED") || !strings.Contains(qc[0].Body, "failed checks: `ci`") {
		t.Errorf("the failed PR's comment:\n%s", qc[0].Body)
	}
	e.comment(n, "maint", "/mainguard retry")
	if got := e.pr(n).State; got == "FAILED" {
		t.Fatalf("retry left the PR %s", got)
	}
	e.until(func() bool { return e.pr(n).State == "FAILED" }, "f1.txt")
	for range 3 {
		e.tick()
	}
	if qc := e.queueComments(n); len(qc) != 1 || !strings.Contains(qc[0].Body, "**Failed**") {
		t.Errorf("queue comments after a retry: %+v", qc)
	}
	if r := e.replies(n); len(r) != 0 {
		t.Errorf("replies: %q", r)
	}
}

// Commands that cannot act are answered with a comment naming why, and
// queue nothing; an edited comment, a redelivered webhook and a badly
// signed one do nothing.
func TestCommandsThatCannotAct(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"labelCommandsEnabled": true}), nil)
	e.hooks()
	if _, err := e.Sim.CreateBranch(repoFull, "release", "main"); err != nil {
		t.Fatal(err)
	}
	issue, err := e.Sim.OpenIssue(repoFull, "A bug", "maint")
	if err != nil {
		t.Fatal(err)
	}
	n := e.openPR("x1")
	if _, err := e.Sim.CommitFile(repoFull, "x2", "x2.txt", "x2\n", "add x2"); err != nil {
		t.Fatal(err)
	}
	rel, err := e.Sim.OpenPR(repoFull, "x2", "release", "Into release", "dev")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		pr    int
		do    func()
		reply string
	}{
		{"an issue", issue, func() { e.comment(issue, "maint", "/mainguard merge") }, "on pull requests only; #" + itoa(issue) + " is an issue"},
		{"unknown command", n, func() { e.comment(n, "maint", "/mainguard frobnicate") }, "`frobnicate` is not a merge queue command"},
		{"bad priority", n, func() { e.comment(n, "maint", "/mainguard merge --priority extreme") }, "`--priority extreme` is not a priority"},
		{"no queue", rel, func() { e.comment(rel, "maint", "/trunk merge") }, "has no merge queue for `release`"},
		{"label, no queue", rel, func() {
			if err := e.Sim.AddLabel(repoFull, rel, "maint", "mainguard-merge"); err != nil {
				t.Fatal(err)
			}
			e.Sim.Flush()
		}, "has no merge queue for `release`"},
		{"cancel, not queued", n, func() { e.comment(n, "maint", "/mainguard cancel") }, "refused: pull request " + itoa(n) + " is not submitted"},
	}
	for _, c := range cases {
		before := len(e.replies(c.pr))
		c.do()
		r := e.replies(c.pr)
		if len(r) != before+1 || !strings.Contains(r[len(r)-1], c.reply) {
			t.Errorf("%s: replies %q, want one more saying %q", c.name, r, c.reply)
		}
	}
	// An edit that turns a comment into a command does nothing.
	id := e.comment(n, "maint", "looks good")
	if err := e.Sim.EditComment(repoFull, id, "maint", "/mainguard merge"); err != nil {
		t.Fatal(err)
	}
	e.Sim.Flush()
	for _, pr := range []int{n, rel} {
		if code := e.submittedCode(pr); code != http.StatusNotFound {
			t.Errorf("PR %d was queued: %d", pr, code)
		}
	}
	// A badly signed comment webhook is refused and does nothing; a good
	// one is handled once, redelivered under its own id or replayed under
	// three others (the review's probe); one without a delivery id, and
	// one of a comment older than ReplayWindow, are refused.
	commentBody := func(id int, at time.Time) []byte {
		return []byte(`{"action":"created","issue":{"number":` + itoa(n) + `,"pull_request":{"url":"x"}},"comment":{"id":` + itoa(id) +
			`,"body":"/mainguard status","updated_at":"` + at.UTC().Format(time.RFC3339) + `"},"repository":{"name":"web","full_name":"acme/web","owner":{"login":"acme"}},"sender":{"login":"maint"}}`)
	}
	body := commentBody(999, e.Clock.Now())
	before := len(e.replies(n))
	if code, _ := e.webhook("issue_comment", "d-sig", body, sign(body, "wrong")); code != http.StatusUnauthorized {
		t.Errorf("bad signature: %d, want 401", code)
	}
	if got := len(e.replies(n)); got != before {
		t.Errorf("a badly signed command was answered")
	}
	for _, id := range []string{"d-status", "d-status", "d-replay-1", "d-replay-2", "d-replay-3"} {
		if code, resp := e.webhook("issue_comment", id, body, sign(body, webhookSecret)); code != http.StatusOK {
			t.Fatalf("status command delivered as %s: %d %s", id, code, resp)
		}
	}
	if r := e.replies(n); len(r) != before+1 || !strings.Contains(r[len(r)-1], "was never submitted") {
		t.Errorf("one status command delivered under four delivery ids: replies %q, want one", r[before:])
	}
	fresh := commentBody(1000, e.Clock.Now())
	if code, resp := e.webhook("issue_comment", "", fresh, sign(fresh, webhookSecret)); code != http.StatusBadRequest || resp != "X-GitHub-Delivery is required" {
		t.Errorf("no delivery id: %d %s", code, resp)
	}
	old := commentBody(1001, e.Clock.Now().Add(-queueapi.ReplayWindow-time.Minute))
	if code, resp := e.webhook("issue_comment", "d-old", old, sign(old, webhookSecret)); code != http.StatusBadRequest || !strings.Contains(resp, "1h1m0s old") {
		t.Errorf("a delivery of an old comment: %d %s", code, resp)
	}
	if got := len(e.replies(n)); got != before+1 {
		t.Errorf("refused deliveries were answered: %d replies", got-before)
	}
}

// With createPrsForTestingBranches, each test branch gets a draft pull
// request, labelled, closed when its run ends.
func TestDraftTestPROpenedAndClosedWithItsRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	e.ok("updateQueue", q(map[string]any{"createPrsForTestingBranches": true}), nil)
	n := e.openPR("t1")
	e.ok("submitPullRequest", prq(n, nil), nil)
	testPRs := func() []githubsim.PullRequest {
		ps, err := e.Sim.PullRequests(repoFull)
		if err != nil {
			t.Fatal(err)
		}
		return slices.DeleteFunc(ps, func(p githubsim.PullRequest) bool { return !strings.HasPrefix(p.HeadRef, "trunk-merge/") })
	}
	for i := 0; e.pr(n).State != "TESTING"; i++ {
		if i == 10 {
			t.Fatal("the PR never started testing")
		}
		e.tick()
	}
	ps := testPRs()
	if len(ps) != 1 || !ps[0].Draft || ps[0].State != "open" || ps[0].BaseRef != "main" || !strings.Contains(ps[0].Title, "#"+itoa(n)) {
		t.Fatalf("test PRs while testing: %+v", ps)
	}
	if ls := e.labels(ps[0].Number); !slices.Equal(ls, []string{"mainguard: test run"}) {
		t.Errorf("test PR labels: %q", ls)
	}
	e.until(func() bool { return e.pr(n).State == "MERGED" })
	if ps := testPRs(); len(ps) != 1 || ps[0].State != "closed" || ps[0].Merged {
		t.Errorf("test PRs after the run: %+v", ps)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
