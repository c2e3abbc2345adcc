package githubsim_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// TestWebPages: a repository, a pull request, a commit and a branch have
// pages at GitHub's web paths, with no token (even when the API needs
// one), showing their state; what does not exist is the API's 404.
func TestWebPages(t *testing.T) {
	t.Parallel()
	s := newSim(t, githubsim.Options{Token: "secret"})
	head := must[string](t)(s.CommitFile(fullName, "feature", "a.txt", "a\n", "Add a"))
	must[int](t)(s.OpenPR(fullName, "feature", "main", "Add <a>", "ada"))
	if err := s.SetStatus(fullName, head, "ci", "failure", "", "https://ci.example/1"); err != nil {
		t.Fatal(err)
	}
	must[string](t)(s.CreateBranch(fullName, "trunk-merge/pr-1/x", head))
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for path, want := range map[string][]string{
		"/acme/app":                {"<h1>acme/app</h1>", `href="/acme/app/pull/1"`, "#1 Add &lt;a&gt; (open)", `href="/acme/app/tree/main"`},
		"/acme/app/pull/1":         {"#1 Add &lt;a&gt;", "open, by ada", "feature into main", `href="/acme/app/commit/` + head + `"`, `<a href="https://ci.example/1">status ci: failure</a>`},
		"/acme/app/commit/" + head: {"<h1>Add a</h1>", "commit " + head, "status ci: failure"},
		"/acme/app/tree/" + url.PathEscape("trunk-merge/pr-1/x"): {"branch trunk-merge/pr-1/x", head[:7] + " Add a"},
		"/acme/app/tree/trunk-merge/pr-1/x":                      {"branch trunk-merge/pr-1/x"},
	} {
		code, body := get(path)
		for _, w := range want {
			if code != http.StatusOK || !strings.Contains(body, w) {
				t.Errorf("GET %s: %d, want %q in\n%s", path, code, w, body)
			}
		}
	}
	for _, path := range []string{"/acme/app/pull/9", "/acme/app/commit/0123456", "/acme/app/tree/gone", "/acme/nope", "/acme/app/issues/1"} {
		if code, _ := get(path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}
