package queueapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// Bad input answers the contract's status with a sentence naming the
// field or rule, and changes nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	n := e.openPR("busy")
	e.ok("submitPullRequest", prq(n, nil), nil)
	draft := e.openPR("draft")
	if err := e.Sim.ConvertToDraft(repoFull, draft); err != nil {
		t.Fatal(err)
	}
	e.ok("submitPullRequest", prq(draft, nil), nil) // stays NOT_READY

	targets := make([]string, 100_001)
	for i := range targets {
		targets[i] = "t"
	}
	long := strings.Repeat("x", 1025)
	const sha = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	for _, c := range []struct {
		name, path string
		body       any
		status     int
		says       string
	}{
		{"unknown queue", "getQueue", q(map[string]any{"targetBranch": "nope"}), 404, "no queue for branch nope"},
		{"unknown queue submit", "submitPullRequest", func() map[string]any { m := prq(1, nil); m["targetBranch"] = "nope"; return m }(), 404, "no queue"},
		{"unknown PR", "getSubmittedPullRequest", prq(99, nil), 404, "pull request 99 was never submitted"},
		{"cancel unknown PR", "cancelPullRequest", prq(99, nil), 404, "not submitted"},
		{"PR number 0", "submitPullRequest", prq(0, nil), 400, "pr.number must be a positive integer"},
		{"negative PR number", "submitPullRequest", prq(-3, nil), 400, "pr.number must be a positive integer"},
		{"non-numeric PR number", "submitPullRequest", func() map[string]any { m := q(nil); m["pr"] = map[string]any{"number": "abc"}; return m }(), 400, "pr.number must be a positive integer"},
		{"fractional PR number", "submitPullRequest", prq(0, map[string]any{"pr": map[string]any{"number": 1.5}}), 400, "pr.number must be a positive integer"},
		{"missing PR", "submitPullRequest", q(nil), 400, "pr is required"},
		{"priority 256", "submitPullRequest", prq(n, map[string]any{"priority": 256}), 400, "priority must be an integer from 0 to 255"},
		{"priority extreme", "submitPullRequest", prq(n, map[string]any{"priority": "extreme"}), 400, "priority must be"},
		{"targets of a wrong type", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": sha}, "impactedTargets": 5}), 400, "impactedTargets must be"},
		{"targets with a number", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": sha}, "impactedTargets": []any{"a", 1}}), 400, "impactedTargets must be"},
		{"targets over the count", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": sha}, "impactedTargets": targets}), 400, "at most 100000"},
		{"target too long", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": sha}, "impactedTargets": []string{long}}), 400, "impactedTargets[0] must be at most 1024 bytes, got 1025"},
		{"targets without sha", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n}, "impactedTargets": "ALL"}), 400, "pr.sha is required"},
		{"concurrency 0", "updateQueue", q(map[string]any{"concurrency": 0}), 400, "concurrency must be at least 1"},
		{"unknown merge method", "updateQueue", q(map[string]any{"mergeMethod": "octopus"}), 400, "mergeMethod must be MERGE_COMMIT, SQUASH or REBASE"},
		{"state set by hand", "updateQueue", q(map[string]any{"state": "SWITCHING_MODES"}), 400, "state must be RUNNING, PAUSED or DRAINING"},
		{"flaky retries 4", "updateQueue", q(map[string]any{"flakyRetries": 4}), 400, "flakyRetries must be 0 to 3"},
		{"flaky retries -1", "updateQueue", q(map[string]any{"flakyRetries": -1}), 400, "flakyRetries must be 0 to 3"},
		{"unknown flaky policy", "updateQueue", q(map[string]any{"flakyRetryPolicy": "SOMETIMES"}), 400, "flakyRetryPolicy"},
		{"evidence wait too long", "updateQueue", q(map[string]any{"flakyEvidenceWaitSeconds": 3601}), 400, "flakyEvidenceWaitSeconds must be 0 to 3600"},
		{"flaky retries a string", "updateQueue", q(map[string]any{"flakyRetries": "1"}), 400, "flakyRetries"},
		{"state label prefix too long", "updateQueue", q(map[string]any{"stateLabelPrefix": strings.Repeat("x", 40)}), 400, "stateLabelPrefix must be 1 to 35 characters"},
		{"delete with PRs", "deleteQueue", q(nil), 400, "queue is not empty"},
		{"other host", "getQueue", q(map[string]any{"repo": map[string]string{"host": "gitlab.com", "owner": "acme", "name": "web"}}), 400, "repo.host \"gitlab.com\" is not supported"},
		{"no target branch", "getQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": "acme", "name": "web"}}, 400, "targetBranch is required"},
		{"queue exists", "createQueue", q(nil), 409, "a queue already exists"},
		{"unknown run", "getMergeQueueTestingDetails", map[string]any{"testRunId": "00000000-0000-4000-8000-000000000000"}, 404, "no test run 00000000-0000-4000-8000-000000000000"},
		{"run id not a uuid", "getMergeQueueTestingDetails", map[string]any{"testRunId": "nope"}, 400, `testRunId must be a uuid like 01234567-0123-0123-0123-0123456789ab, got "nope"`},
		{"short sha", "setImpactedTargets", q(map[string]any{"pr": map[string]any{"number": n, "sha": "abc"}, "impactedTargets": "ALL"}), 400, `pr.sha must be a commit sha: 40 or 64 hex digits, got "abc"`},
		{"take 0", "listPullRequests", q(map[string]any{"take": 0}), 400, "take must be from 1 to 100"},
		{"restart not testing", "restartTestsOnPullRequest", prq(draft, nil), 400, "only a pull request in TESTING"},
		{"malformed JSON", "getQueue", `{"repo":`, 400, "not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := e.call(c.path, c.body)
			if code != c.status || !strings.Contains(body, c.says) {
				t.Errorf("%s: got %d %q, want %d with %q", c.path, code, body, c.status, c.says)
			}
		})
	}
	// Nothing changed: the PR is still the one submitted, at its priority.
	if got := e.pr(n); !got.IsCurrentlySubmittedToQueue || got.PriorityValue != 100 {
		t.Errorf("after bad input, PR %d is %+v", n, got)
	}
	// "123" as a string is a valid number; a level name is a priority.
	n2 := e.openPR("str")
	e.ok("submitPullRequest", q(map[string]any{"pr": map[string]any{"number": strconv.Itoa(n2)}, "priority": "HIGH"}), nil)
	if got := e.pr(n2); got.PriorityValue != 10 || got.PriorityName != "high" {
		t.Errorf("PR %d submitted with \"2\" and HIGH: %+v", n2, got)
	}
}

func sign(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// A webhook with a bad signature is refused with 401 and changes nothing;
// a good one is processed once per delivery id.
func TestWebhookSignatureAndDedup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.ok("createQueue", q(nil), nil)
	n := e.openPR("w1")
	e.ok("submitPullRequest", prq(n, nil), nil)
	if err := e.Sim.ClosePR(repoFull, n); err != nil { // no webhook is configured: only ours arrive
		t.Fatal(err)
	}
	body := []byte(`{"action":"closed","number":1,"pull_request":{"number":1,"merged":false,"head":{"ref":"w1","sha":"x"},"base":{"ref":"main"}},"repository":{"name":"web","full_name":"acme/web","owner":{"login":"acme"}}}`)
	for _, sig := range []string{"", "sha256=00", sign(body, "wrong secret"), sign(append(body, ' '), webhookSecret)} {
		if code, resp := e.webhook("pull_request", "d-bad", body, sig); code != http.StatusUnauthorized {
			t.Errorf("signature %q: %d %s, want 401", sig, code, resp)
		}
	}
	if got := e.pr(n).State; got == "CANCELLED" {
		t.Fatalf("a refused webhook changed the queue: %s", got)
	}
	if code, resp := e.webhook("pull_request", "d-1", body, sign(body, webhookSecret)); code != http.StatusOK {
		t.Fatalf("good webhook: %d %s", code, resp)
	}
	if got := e.pr(n).State; got != "CANCELLED" {
		t.Errorf("after the closed webhook, PR is %s, want CANCELLED", got)
	}
	reads := e.Sim.RequestCount("", "/")
	if code, resp := e.webhook("pull_request", "d-1", body, sign(body, webhookSecret)); code != http.StatusOK {
		t.Fatalf("redelivery: %d %s", code, resp)
	}
	if got := e.Sim.RequestCount("", "/"); got != reads {
		t.Errorf("a redelivered webhook made %d GitHub calls", got-reads)
	}
}

func (e *env) webhook(event, id string, body []byte, sig string) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/v1/github/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", sig)
	w := httptest.NewRecorder()
	e.Mux.ServeHTTP(w, req)
	out, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(out)
}
