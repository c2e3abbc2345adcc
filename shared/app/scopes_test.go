package app_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
)

// TestUploadTokenOnlyUploads is the review's probe: a token made for CI
// (the upload scope) is 403 on every endpoint but the uploader's, every
// merge-queue command included, with a sentence naming the scope it lacks;
// on the uploader's it works. Every function is called as Lambda would.
func TestUploadTokenOnlyUploads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	body := map[string]any{"repo": map[string]string{"host": "github.com", "owner": "Acme", "name": "web"}, "org_url_slug": "acme",
		"orgUrlSlug": "acme", "targetBranch": "main", "clientVersion": "0.10.2", "remoteUrls": []string{},
		"test_ids": []string{"06cb6db5-f807-5198-b072-af67a0636f8a"}}
	n := 0
	for _, r := range api.Routes {
		if r.Public {
			continue
		}
		ev := event(r.Path, body)
		ev.RequestContext.HTTP.Method = r.Method
		ev.Headers["x-api-token"] = "{{UPLOAD_TOKEN}}"
		resp := h.call(t, r.Name, ev)
		switch {
		case r.Scope == api.ScopeUpload && resp.StatusCode != http.StatusOK:
			t.Errorf("%s with an upload token: %d %s", r.Name, resp.StatusCode, resp.Body)
		case r.Scope != api.ScopeUpload && (resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Body, "needs the "+string(r.Scope)+" scope, which this token lacks (its scopes: upload)")):
			t.Errorf("%s with an upload token: %d %s", r.Name, resp.StatusCode, resp.Body)
		}
		n++
	}
	if n < 19 {
		t.Errorf("%d endpoints tried", n)
	}
}

// TestFailedAuthenticationNeverRefusesAValidToken is the review's probe
// through the functions as deployed (the limit on): 40 bad tokens from one
// address, then a valid token from the same address, is 200.
func TestFailedAuthenticationNeverRefusesAValidToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.RateLimit, c.RateBurst = 100, 200 })
	call := func(token string) int {
		ev := event("/getQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": "Acme", "name": "web"}, "targetBranch": "main"})
		ev.Headers["x-api-token"] = token
		ev.RequestContext.HTTP.SourceIP = "203.0.113.50"
		return h.call(t, "get-queue", ev).StatusCode
	}
	codes := map[int]int{}
	for range 40 {
		codes[call("mg_guessed")]++
	}
	if codes[http.StatusUnauthorized] != 30 || codes[http.StatusTooManyRequests] != 10 {
		t.Errorf("40 bad tokens: %v, want 30 × 401 then 429", codes)
	}
	h.seedQueues(t)
	if got := call("{{TOKEN}}"); got != http.StatusOK {
		t.Errorf("a valid token from the same address after 40 bad ones: %d, want 200", got)
	}
}

// TestAPIDocListsScopes: docs/api.md's scope table (11.2) names every
// route under its scope.
func TestAPIDocListsScopes(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[api.Scope]string{}
	for line := range strings.Lines(string(md)) {
		for _, s := range api.Scopes {
			if strings.HasPrefix(line, "| `"+string(s)+"` |") {
				rows[s] = line
			}
		}
	}
	for _, r := range api.Routes {
		if r.Public {
			continue
		}
		if !strings.Contains(rows[r.Scope], "`"+r.Path+"`") {
			t.Errorf("docs/api.md 11.2 does not list %s under the %s scope", r.Path, r.Scope)
		}
	}
}

// TestTenancyCosts: by AWS's billing rules (DDB_BILL), knowing a
// repository's owner costs its request one strongly consistent GetItem, 1
// read unit, and nothing while the copy remembers it; a failed
// authentication costs its request one write unit (the address's bucket).
func TestTenancyCosts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.BillDynamo, c.RateLimit, c.RateBurst = true, 100, 200 })
	h.seedQueues(t)
	last := func() map[string]any { return h.lastLog(t) }
	getQueue := func(owner, name string) (read, write float64) {
		t.Helper()
		ev := event("/getQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": owner, "name": name}, "targetBranch": "main"})
		h.call(t, "get-queue", ev)
		rec := last()
		return rec["ddb_billed_read"].(float64), rec["ddb_billed_write"].(float64)
	}
	// seedQueues left the token and both owners cached; 31 s later they
	// are all read again: the first request reads the token (and Acme/web's
	// owner), the next acme/api's owner alone, the last nothing of either
	// (acme/api's queue is on another branch: its 404 reads as much).
	h.Advance(31 * time.Second)
	getQueue("Acme", "web")
	coldRead, _ := getQueue("acme", "api")
	warmRead, warmWrite := getQueue("acme", "api")
	if coldRead-warmRead != 1 || warmWrite != 0 {
		t.Errorf("the owner of a repository cost %v read units (cold %v, warm %v), want 1; %v write units", coldRead-warmRead, coldRead, warmRead, warmWrite)
	}
	ev := event("/getQueue", map[string]any{})
	ev.Headers["x-api-token"] = "mg_guessed"
	ev.RequestContext.HTTP.SourceIP = "198.51.100.9"
	h.call(t, "get-queue", ev)
	if rec := last(); rec["status"] != 401.0 || rec["ddb_billed_write"] != 1.0 {
		t.Errorf("a failed authentication: %v, want 401 and 1 write unit", rec)
	}
}

// lastLog is the last log line of the harness's app, decoded.
func (h *harness) lastLog(tb testing.TB) map[string]any {
	tb.Helper()
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		tb.Fatal(err)
	}
	return rec
}
