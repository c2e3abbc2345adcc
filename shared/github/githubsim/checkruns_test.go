package githubsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestCheckRunEndpoints: the check-run endpoints refuse what GitHub's REST
// reference refuses (422 with the field named), make a new run for every
// POST (so a client must find its run before making one), list the newest
// run of a name by default and every run with filter=all, and edit in place.
func TestCheckRunEndpoints(t *testing.T) {
	t.Parallel()
	s, err := New(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sha, err := s.CreateRepo("acme/web", "main")
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}
	long := strings.Repeat("x", 65536)
	for _, bad := range []struct{ body, msg string }{
		{`{"head_sha":"` + sha + `"}`, `"name" wasn't supplied`},
		{`{"name":"t"}`, `"head_sha" wasn't supplied`},
		{`{"name":"t","head_sha":"0000000000000000000000000000000000000000"}`, "No commit found for SHA"},
		{`{"name":"t","head_sha":"` + sha + `","status":"done"}`, `"done" is not a member`},
		{`{"name":"t","head_sha":"` + sha + `","status":"completed"}`, `"conclusion" wasn't supplied`},
		{`{"name":"t","head_sha":"` + sha + `","completed_at":"2026-07-23T01:32:50Z"}`, `"conclusion" wasn't supplied`},
		{`{"name":"t","head_sha":"` + sha + `","conclusion":"stale"}`, "cannot be set to stale"},
		{`{"name":"t","head_sha":"` + sha + `","conclusion":"green"}`, `"green" is not a member`},
		{`{"name":"t","head_sha":"` + sha + `","conclusion":"success","output":{"summary":"s"}}`, `"title" wasn't supplied`},
		{`{"name":"t","head_sha":"` + sha + `","conclusion":"success","output":{"title":"t"}}`, `"summary" wasn't supplied`},
		{`{"name":"t","head_sha":"` + sha + `","conclusion":"success","output":{"title":"t","summary":"` + long + `"}}`, "Only 65535 characters are allowed; 65536 were supplied"},
	} {
		code, out := call(http.MethodPost, "/repos/acme/web/check-runs", bad.body)
		if msg, _ := out["message"].(string); code != 422 || !strings.Contains(msg, bad.msg) {
			t.Errorf("POST %.80s: %d %q, want 422 with %q", bad.body, code, msg, bad.msg)
		}
	}
	if runs, _ := s.CheckRuns("acme/web", sha); len(runs) != 0 {
		t.Fatalf("refused bodies made runs: %v", runs)
	}
	body := `{"name":"mainguard/tests","head_sha":"` + sha + `","conclusion":"failure","output":{"title":"1 new","summary":"- a"}}`
	code, first := call(http.MethodPost, "/repos/acme/web/check-runs", body)
	if code != 201 || first["status"] != "completed" || first["conclusion"] != "failure" {
		t.Fatalf("create: %d %v", code, first)
	}
	code, second := call(http.MethodPost, "/repos/acme/web/check-runs", body)
	if code != 201 || second["id"] == first["id"] {
		t.Fatalf("a second POST: %d %v", code, second)
	}
	_, latest := call(http.MethodGet, "/repos/acme/web/commits/"+sha+"/check-runs?check_name=mainguard/tests", "")
	_, all := call(http.MethodGet, "/repos/acme/web/commits/"+sha+"/check-runs?check_name=mainguard/tests&filter=all", "")
	if latest["total_count"] != 1.0 || all["total_count"] != 2.0 {
		t.Errorf("listed: latest %v, all %v; want 1 and 2", latest["total_count"], all["total_count"])
	}
	id := first["id"].(float64)
	path := "/repos/acme/web/check-runs/" + strconv.FormatInt(int64(id), 10)
	if code, out := call(http.MethodPatch, path, `{"head_sha":"`+sha+`"}`); code != 422 {
		t.Errorf("PATCH head_sha: %d %v", code, out)
	}
	code, edited := call(http.MethodPatch, path, `{"conclusion":"success","output":{"title":"none left","summary":"1 passed on retry"}}`)
	if out := edited["output"].(map[string]any); code != 200 || edited["conclusion"] != "success" || out["title"] != "none left" {
		t.Errorf("PATCH: %d %v", code, edited)
	}
	if code, got := call(http.MethodGet, path, ""); code != 200 || got["conclusion"] != "success" {
		t.Errorf("GET: %d %v", code, got)
	}
	if code, _ := call(http.MethodPatch, "/repos/acme/web/check-runs/424242", `{"conclusion":"success"}`); code != 404 {
		t.Errorf("PATCH of no run: %d", code)
	}
}
