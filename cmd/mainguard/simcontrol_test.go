package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// The local server's simulated GitHub takes comments and labels as a
// person gives them on GitHub, as "dev" (who may command the queue) unless
// another user is named, and lists a pull request's comments back.
func TestSimControlComments(t *testing.T) {
	t.Parallel()
	sim, err := githubsim.New(t.TempDir(), githubsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	var claimed []string
	h := simControl(sim, func(_ context.Context, owner, name string) error {
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
	resp := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/repos/acme/web/collaborators/dev/permission", nil)
	sim.Handler().ServeHTTP(resp, req)
	if !strings.Contains(resp.Body.String(), `"permission":"write"`) {
		t.Errorf("dev's permission: %s", resp.Body)
	}
}
