package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/webapp"
)

// TestSignedOutCookieIsRefused: signing out revokes the session in the
// table, so its cookie, kept by someone (a copy in another browser, a
// stolen one), is sent to sign-in: by the copy that signed it out at once,
// and by another copy of the web function, which never saw the session
// before, too.
func TestSignedOutCookieIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	e.signIn(c, "acme")
	u, _ := url.Parse(e.URL)
	kept := c.Jar.Cookies(u)
	home := e.get(c, "/acme")
	if got := home.header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("over plain http: Strict-Transport-Security %q", got)
	}
	if out := e.do(c, http.MethodPost, "/signout", url.Values{"csrf": {csrfOf(t, home.body)}}); out.code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", out.code)
	}
	thief := e.client()
	thief.Jar.SetCookies(u, kept)
	if a := e.get(thief, "/acme"); a.code != http.StatusSeeOther || !strings.HasPrefix(a.location, "/signin") {
		t.Errorf("the signed-out cookie: %d to %q, want the sign-in form", a.code, a.location)
	}
	// Another copy: its own Base and caches, on the same table.
	b, err := wiring.NewBase(e.App.Config, wiring.Options{DB: e.DB, Now: e.Clock.Now, Log: slog.New(slog.DiscardHandler), KeysInTable: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := webapp.Web(b)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/acme", nil)
	for _, ck := range kept {
		req.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	b.WebHandler(other.Handler()).ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/signin") {
		t.Errorf("the signed-out cookie on another copy: %d to %q", w.Code, w.Header().Get("Location"))
	}
}

// TestSecureSessionCookie: served over https, the session cookie is
// __Host-mainguard_session, Secure, HttpOnly, SameSite=Strict and of path
// /, and every page says Strict-Transport-Security (over plain http, the
// local server's, neither: TestSignedOutCookieIsRefused).
func TestSecureSessionCookie(t *testing.T) {
	t.Parallel()
	s := service.New(t, service.Options{Start: t0, Orgs: []string{"acme"},
		Env: map[string]string{"PUBLIC_APP_URL": "https://app.example.test", "BUNDLE_DIR": t.TempDir()}})
	do := func(method, path string, form url.Values, cookies ...*http.Cookie) *http.Response {
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req := httptest.NewRequest(method, "https://app.example.test"+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, c := range cookies {
			req.AddCookie(c)
		}
		w := httptest.NewRecorder()
		s.Mux.ServeHTTP(w, req)
		return w.Result()
	}
	form := do(http.MethodGet, "/signin", nil)
	if got := form.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Errorf("Strict-Transport-Security: %q", got)
	}
	signin := form.Cookies()
	if len(signin) != 1 || !signin[0].Secure {
		t.Fatalf("sign-in cookie: %v", signin)
	}
	page, _ := io.ReadAll(form.Body)
	csrf := csrfRE.FindStringSubmatch(string(page))
	if csrf == nil {
		t.Fatal("no CSRF token in the form")
	}
	resp := do(http.MethodPost, "/signin", url.Values{"token": {s.Tokens["acme"]}, "csrf": {csrf[1]}}, signin[0])
	set := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	for _, attr := range []string{"__Host-mainguard_session=", "Path=/", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(set, attr) {
			t.Errorf("session cookie %q lacks %s", set, attr)
		}
	}
	if strings.Contains(set, "Domain=") {
		t.Errorf("a __Host- cookie names no domain: %q", set)
	}
	if a := do(http.MethodGet, "/acme", nil, resp.Cookies()...); a.StatusCode != http.StatusOK {
		t.Errorf("home with the cookie: %d", a.StatusCode)
	}
	// The plain-http cookie's name is no session here.
	plain := &http.Cookie{Name: "mainguard_session", Value: resp.Cookies()[0].Value}
	if a := do(http.MethodGet, "/acme", nil, plain); a.StatusCode != http.StatusSeeOther {
		t.Errorf("the unprefixed cookie: %d", a.StatusCode)
	}
}

// TestWebActionsNeedTheirScope: a token signs in to the web app when it
// can read, and each action needs what its endpoint needs: pause the
// queue scope (updateQueue's), the quarantine override admin; an upload
// token cannot sign in at all.
func TestWebActionsNeedTheirScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	e.uploadFlaky()
	id := e.testID("test_login")
	token := func(scopes ...string) string {
		secret, _, err := e.App.Store.CreateScopedToken(context.Background(), "acme", scopes)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	signIn := func(tok string) (*http.Client, answer) {
		c := e.client()
		return c, e.do(c, http.MethodPost, "/signin", url.Values{"token": {tok}, "csrf": {e.signInForm(c)}})
	}
	if _, a := signIn(token("upload")); a.code != http.StatusForbidden || !strings.Contains(a.body, "That token cannot read (its scopes: upload): sign in with a token that has the read scope.") {
		t.Errorf("an upload token signs in: %d %s", a.code, a.body)
	}
	queue := "/acme/merge-queue/acme/web/main"
	test := "/acme/flaky-tests/test/" + id + "?repo=acme%2Fweb"
	for _, c := range []struct {
		scopes        []string
		pause, quaran int
	}{
		{[]string{"read"}, http.StatusForbidden, http.StatusForbidden},
		{[]string{"read", "queue"}, http.StatusSeeOther, http.StatusForbidden},
		{[]string{"admin"}, http.StatusSeeOther, http.StatusSeeOther},
	} {
		cl, a := signIn(token(c.scopes...))
		if a.code != http.StatusSeeOther {
			t.Fatalf("%v: sign in: %d", c.scopes, a.code)
		}
		page := e.get(cl, queue)
		if a := e.do(cl, http.MethodPost, queue, url.Values{"action": {"resume"}, "csrf": {csrfOf(t, page.body)}}); a.code != c.pause {
			t.Errorf("%v: resume the queue: %d, want %d", c.scopes, a.code, c.pause)
		} else if a.code == http.StatusForbidden && !strings.Contains(a.body, "Resuming the queue needs the queue scope") {
			t.Errorf("%v: the refusal does not name the scope: %s", c.scopes, a.body)
		}
		page = e.get(cl, test)
		if a := e.do(cl, http.MethodPost, test, url.Values{"override": {"ALWAYS_QUARANTINE"}, "csrf": {csrfOf(t, page.body)}}); a.code != c.quaran {
			t.Errorf("%v: quarantine override: %d, want %d", c.scopes, a.code, c.quaran)
		}
	}
}
