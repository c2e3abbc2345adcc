package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserGitHubSignIn: in Chromium, a person opens a queue page signed
// out, chooses "Sign in with GitHub", signs in on the GitHub test server's
// authorization page and comes back to the page they asked for; as a
// reader of the repository they see it, and their pause is refused; a
// person who cannot read another repository gets 404 for its pages.
func TestBrowserGitHubSignIn(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t)
	queue := "/acme/merge-queue/acme/web/main"

	signIn := func(login, path string) {
		ctx := tab(t)
		open(t, ctx, e, path, http.StatusOK) // the sign-in form, after the redirect
		screenshot(t, ctx, "signin-"+login)
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#github-signin"))); err != nil {
			t.Fatal(err)
		}
		if at := eval[string](t, ctx, "location.origin + location.pathname"); at != e.Sim.URL()+"/login/oauth/authorize" {
			t.Fatalf("%s: at %s, not on GitHub's authorization page", login, at)
		}
		screenshot(t, ctx, "authorize-"+login)
		do(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), login))
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[name="authorize"]`))); err != nil {
			t.Fatal(err)
		}
		// Back here, the page moves on to where the person was going.
		do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`button[name="action"]`)))
		if at := eval[string](t, ctx, "location.pathname"); at != path {
			t.Fatalf("%s: signed in at %s, want %s", login, at, path)
		}
		screenshot(t, ctx, "signed-in-"+login)
		switch login {
		case "reader":
			contains(t, ctx, "Merge queue github.com/acme/web", "Running")
			if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[value="pause"]`))); err != nil {
				t.Fatal(err)
			}
			contains(t, ctx, "Pausing the queue needs write access to acme/web on GitHub; @reader has read access")
			screenshot(t, ctx, "reader-cannot-pause")
			open(t, ctx, e, queue, http.StatusOK)
			contains(t, ctx, "Running")
		case "outsider":
			open(t, ctx, e, "/acme/merge-queue/acme/api/main", http.StatusNotFound)
			contains(t, ctx, "There is no such page, or it belongs to another organization.")
			open(t, ctx, e, "/acme/flaky-tests?repo=acme/api", http.StatusNotFound)
			open(t, ctx, e, "/acme", http.StatusOK)
			if home := text(t, ctx, "main"); strings.Contains(home, "acme/api") || !strings.Contains(home, "acme/web") {
				t.Errorf("outsider's home lists what they cannot read, or not what they can:\n%s", home)
			}
			screenshot(t, ctx, "outsider-home")
		}
	}
	signIn("reader", queue)
	signIn("outsider", queue)
}
