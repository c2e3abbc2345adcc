package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// The local server's simulated GitHub takes comments and labels as a
// person gives them on GitHub, as "dev" (who may command the queue) unless
// another user is named, and lists a pull request's comments back.
func TestSimControlComments(t *testing.T) {
	t.Parallel()
	var claimed []string
	sim, h := newSimControl(t, func(_ context.Context, owner, name string) error {
		claimed = append(claimed, owner+"/"+name)
		return nil
	})
	post := func(path, body string) string {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w.Body.String()
	}
	post("/sim/repo", `{"repo":"acme/web","branch":"main"}`)
	if len(claimed) != 1 || claimed[0] != "acme/web" {
		t.Errorf("a repository made here is claimed for the local organization: %q", claimed)
	}
	post("/sim/pr", `{"repo":"acme/web","head":"f","base":"main","title":"F","file":"f.txt","content":"f"}`)
	post("/sim/comment", `{"repo":"acme/web","pr":1,"body":"/mainguard merge"}`)
	post("/sim/label", `{"repo":"acme/web","pr":1,"label":"mainguard-merge"}`)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/sim/comments?repo=acme/web&pr=1", nil))
	var cs []githubsim.Comment
	if err := json.Unmarshal(w.Body.Bytes(), &cs); err != nil || len(cs) != 1 || cs[0].Author != "dev" || cs[0].Body != "/mainguard merge" {
		t.Errorf("comments: %v %s", err, w.Body)
	}
	if ls, _ := sim.Labels("acme/web", 1); len(ls) != 1 {
		t.Errorf("labels: %v", ls)
	}
	if body := simGet(sim, "/repos/acme/web/collaborators/dev/permission"); !strings.Contains(body, `"permission":"write"`) {
		t.Errorf("dev's permission: %s", body)
	}
}

// newSimControl is the control surface of a new simulated GitHub; claim
// is told of each repository made through it (nil: nothing to tell).
func newSimControl(t *testing.T, claim func(ctx context.Context, owner, name string) error) (*githubsim.Server, http.Handler) {
	t.Helper()
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	if claim == nil {
		claim = func(context.Context, string, string) error { return nil }
	}
	return sim, simControl(sim, claim)
}

// simGet answers a REST GET of the simulated GitHub, sent as a client
// does (GitHub refuses a request without a User-Agent).
func simGet(sim *githubsim.Server, path string) string {
	resp := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("User-Agent", "simcontrol-test")
	sim.Handler().ServeHTTP(resp, req)
	return resp.Body.String()
}

// /sim/ruleset adds a ruleset of the repository or of its organization,
// which GitHub's rules endpoint then lists for the branch.
func TestSimControlRuleset(t *testing.T) {
	t.Parallel()
	sim, h := newSimControl(t, nil)
	for _, body := range []string{
		`{"repo":"acme/web","branch":"main"}`,
		`{"repo":"acme/web","contexts":["ci"],"strict":true}`,
		`{"org":"acme","branch":"main","contexts":["lint"]}`,
		`{"repo":"acme/web","branch":"release","contexts":["release"]}`,
	} {
		path := "/sim/ruleset"
		if !strings.Contains(body, "contexts") {
			path = "/sim/repo"
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, body, w.Code, w.Body)
		}
	}
	var rules []struct {
		Type       string `json:"type"`
		Source     string `json:"ruleset_source"`
		Parameters struct {
			Checks []struct {
				Context string `json:"context"`
			} `json:"required_status_checks"`
			Strict bool `json:"strict_required_status_checks_policy"`
		} `json:"parameters"`
	}
	body := simGet(sim, "/repos/acme/web/rules/branches/main")
	if err := json.Unmarshal([]byte(body), &rules); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var got []string
	for _, r := range rules {
		got = append(got, fmt.Sprintf("%s %s %s strict=%v", r.Type, r.Source, r.Parameters.Checks[0].Context, r.Parameters.Strict))
	}
	want := []string{"required_status_checks acme/web ci strict=true", "required_status_checks acme lint strict=false"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("rules of main (-got +want):\n%s", diff)
	}
}
