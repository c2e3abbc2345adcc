package web_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/github/githubsim"
)

// The GitHub App of the sign-in tests: acme's repositories are under
// installation 101, which acme recorded; beta's under 303, which no
// organization has recorded yet.
const (
	appID                  = 4242
	clientID, clientSecret = "Iv1.simclient", "sim-client-secret"
	acmeInstall            = 101
	betaInstall            = 303
)

var appKey struct {
	once sync.Once
	key  *rsa.PrivateKey
	pem  string
}

// appPrivateKey is the App's key, made once for the package.
func appPrivateKey(tb testing.TB) (*rsa.PrivateKey, string) {
	appKey.once.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		appKey.key = k
		appKey.pem = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	})
	return appKey.key, appKey.pem
}

// newAppEnv is newEnv on a deployment with a GitHub App and its OAuth
// client ("Sign in with GitHub"): the simulated GitHub holds acme/web,
// acme/api and beta/site. Everyone may read every repository (they are
// public) but: dev writes to acme's; outsider cannot read acme/api;
// stranger reads neither of acme's.
func newAppEnv(tb testing.TB) *env {
	tb.Helper()
	key, keyPEM := appPrivateKey(tb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	app := &githubsim.App{
		ID: appID, PublicKey: &key.PublicKey, InstallationID: 999,
		Installations: map[string]int64{"acme": acmeInstall, "beta": betaInstall},
		ClientID:      clientID, ClientSecret: clientSecret, CallbackURL: base + "/signin/github/callback",
	}
	s := service.New(tb, service.Options{Start: t0, Repos: []string{"acme/web", "acme/api", "beta/site"}, Orgs: []string{"acme", "other"}, App: app,
		Owner: "acme",
		Env: map[string]string{"PUBLIC_APP_URL": base, "PUBLIC_API_URL": base + "/v1", "BUNDLE_DIR": tb.TempDir(),
			"GITHUB_APP_ID": strconv.Itoa(appID), "GITHUB_APP_PRIVATE_KEY": keyPEM,
			"GITHUB_APP_CLIENT_ID": clientID, "GITHUB_APP_CLIENT_SECRET": clientSecret}})
	ctx := context.Background()
	// beta/site is no organization's until its installation is recorded.
	if err := s.App.Store.ReleaseRepo(ctx, "acme", "beta", "site"); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.App.Store.AddInstallation(ctx, "acme", acmeInstall, "acme", false); err != nil {
		tb.Fatal(err)
	}
	for _, p := range []struct{ repo, login, perm string }{
		{"acme/web", "dev", "write"}, {"acme/api", "dev", "write"},
		{"acme/api", "outsider", "none"},
		{"acme/web", "stranger", "none"}, {"acme/api", "stranger", "none"},
	} {
		if err := s.Sim.SetPermission(p.repo, p.login, p.perm); err != nil {
			tb.Fatal(err)
		}
	}
	srv := httptest.NewUnstartedServer(s.Mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	e := &env{Service: s, tb: tb, URL: base}
	for _, full := range []string{"acme/web", "acme/api"} {
		owner, name, _ := strings.Cut(full, "/")
		e.api("acme", "createQueue", map[string]any{"repo": map[string]string{"host": "github.com", "owner": owner, "name": name}, "targetBranch": "main"})
	}
	return e
}

// authorize is the person login on GitHub's authorization page, as the
// page's form posts it: where GitHub sends them back.
func (e *env) authorize(c *http.Client, authorizeURL, login string) string {
	e.tb.Helper()
	u, err := url.Parse(authorizeURL)
	if err != nil || !strings.HasPrefix(authorizeURL, e.Sim.URL()+"/login/oauth/authorize?") {
		e.tb.Fatalf("not sent to GitHub's authorization page: %q", authorizeURL)
	}
	q := u.Query()
	form := url.Values{"client_id": {q.Get("client_id")}, "redirect_uri": {q.Get("redirect_uri")}, "state": {q.Get("state")}, "login": {login}, "authorize": {"1"}}
	resp, err := c.PostForm(e.Sim.URL()+"/login/oauth/authorize", form)
	if err != nil {
		e.tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		e.tb.Fatalf("GitHub's authorization: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// gitHubSignIn goes through "Sign in with GitHub" as login and returns
// the answer of the return from GitHub.
func (e *env) gitHubSignIn(c *http.Client, login string) answer {
	e.tb.Helper()
	start := e.get(c, "/signin/github?next=%2Facme")
	if start.code != http.StatusSeeOther {
		e.tb.Fatalf("sign in with GitHub: %d %s", start.code, start.body)
	}
	back := e.authorize(c, start.location, login)
	path, ok := strings.CutPrefix(back, e.URL)
	if !ok {
		e.tb.Fatalf("GitHub sent the person to %q", back)
	}
	return e.get(c, path)
}

// TestGitHubSignIn: people sign in as themselves through the App's
// authorization on GitHub and see the organizations whose installations
// they can read there, and in them the repositories they can read; a
// reader cannot pause a queue or cancel a pull request, a writer can; a
// repository a person cannot read is not found, as one that does not
// exist; someone who can read no recorded installation is not signed in.
func TestGitHubSignIn(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t)

	reader := e.client()
	a := e.gitHubSignIn(reader, "reader")
	if a.code != http.StatusOK || !strings.Contains(a.body, "Signed in as @reader.") || !strings.Contains(a.body, `<meta http-equiv="refresh" content="0; url=/acme">`) {
		t.Fatalf("back from GitHub: %d %s", a.code, a.body)
	}
	home := e.get(reader, "/acme")
	if home.code != http.StatusOK || !strings.Contains(home.body, "github.com/acme/web") || !strings.Contains(home.body, "github.com/acme/api") {
		t.Fatalf("reader's home: %d %s", home.code, home.body)
	}
	if a := e.get(reader, "/other"); a.code != http.StatusNotFound {
		t.Errorf("an organization whose installation reader cannot read: %d", a.code)
	}
	queue := "/acme/merge-queue/acme/web/main"
	page := e.get(reader, queue)
	if page.code != http.StatusOK {
		t.Fatalf("reader's queue page: %d", page.code)
	}
	a = e.do(reader, http.MethodPost, queue, url.Values{"action": {"pause"}, "csrf": {csrfOf(t, page.body)}})
	if a.code != http.StatusForbidden || !strings.Contains(a.body, "Pausing the queue needs write access to acme/web on GitHub; @reader has read access") {
		t.Errorf("reader pauses: %d %s", a.code, a.body)
	}
	if a := e.get(reader, queue); !strings.Contains(a.body, "RUNNING") {
		t.Errorf("the queue changed: %s", a.body)
	}

	dev := e.client()
	e.gitHubSignIn(dev, "dev")
	page = e.get(dev, queue)
	if a := e.do(dev, http.MethodPost, queue, url.Values{"action": {"pause"}, "csrf": {csrfOf(t, page.body)}}); a.code != http.StatusSeeOther {
		t.Errorf("a writer pauses: %d %s", a.code, a.body)
	}
	if a := e.get(dev, queue); !strings.Contains(a.body, "PAUSED") {
		t.Errorf("the writer's pause did nothing")
	}

	outsider := e.client()
	e.gitHubSignIn(outsider, "outsider")
	for _, path := range []string{"/acme/merge-queue/acme/api/main", "/acme/flaky-tests?repo=acme/api", "/acme/merge-queue/acme/nope/main"} {
		if a := e.get(outsider, path); a.code != http.StatusNotFound || !strings.Contains(a.body, "There is no such page, or it belongs to another organization.") {
			t.Errorf("outsider opens %s: %d", path, a.code)
		}
	}
	if home := e.get(outsider, "/acme"); home.code != http.StatusOK || strings.Contains(home.body, "acme/api") || !strings.Contains(home.body, "acme/web") {
		t.Errorf("outsider's home lists what they cannot read, or not what they can: %s", home.body)
	}

	stranger := e.client()
	if a := e.gitHubSignIn(stranger, "stranger"); a.code != http.StatusForbidden || !strings.Contains(a.body, "@stranger can read no organization of this deployment") {
		t.Errorf("someone who reads no recorded installation: %d %s", a.code, a.body)
	}
	if a := e.get(stranger, "/acme"); a.code != http.StatusSeeOther {
		t.Errorf("stranger was signed in: %d", a.code)
	}
}

// TestGitHubSignInRefusesForgedReturns: a return from GitHub this browser
// did not start (no flow cookie, another state, a code used already) signs
// no one in.
func TestGitHubSignInRefusesForgedReturns(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t)
	victim, attacker := e.client(), e.client()
	// The attacker's own trip, whose return they make the victim open.
	start := e.get(attacker, "/signin/github")
	back := e.authorize(attacker, start.location, "reader")
	path, _ := strings.CutPrefix(back, e.URL)
	if a := e.get(victim, path); a.code != http.StatusForbidden || strings.Contains(a.header.Get("Set-Cookie"), "mainguard_session=") {
		t.Errorf("another browser's return: %d %q", a.code, a.header.Get("Set-Cookie"))
	}
	// The victim's own trip, returned with the attacker's code and state.
	e.get(victim, "/signin/github")
	if a := e.get(victim, path); a.code != http.StatusForbidden {
		t.Errorf("a return with another trip's state: %d", a.code)
	}
	// The attacker's return, used once, then again.
	if a := e.get(attacker, path); a.code != http.StatusOK {
		t.Fatalf("the return it belongs to: %d %s", a.code, a.body)
	}
	if a := e.get(attacker, path); a.code != http.StatusForbidden {
		t.Errorf("the same return twice: %d", a.code)
	}
}

// TestGitHubSetupRecordsAnInstallation: once someone installs the App on
// beta, GitHub sends them to the setup address; signed in with other's
// admin token, they prove on GitHub they can read the installation and it
// becomes other's: beta's repositories are other's for the merge queue,
// and no one else's. Someone who cannot read it on GitHub records nothing.
func TestGitHubSetupRecordsAnInstallation(t *testing.T) {
	t.Parallel()
	e := newAppEnv(t)
	site := map[string]any{"repo": map[string]string{"host": "github.com", "owner": "beta", "name": "site"}, "targetBranch": "main"}
	if code, body := e.Post("other", "createQueue", jsonOf(t, site)); code != http.StatusNotFound || body != "no repository github.com/beta/site in this organization" {
		t.Fatalf("before the installation is recorded: %d %s", code, body)
	}
	if err := e.Sim.SetPermission("beta/site", "mallory", "none"); err != nil {
		t.Fatal(err)
	}
	setup := "/github/setup?installation_id=" + strconv.Itoa(betaInstall) + "&setup_action=install"
	for login, want := range map[string]int{"mallory": http.StatusForbidden, "beta-admin": http.StatusOK} {
		c := e.client()
		// Signed out, the setup page asks to sign in and comes back.
		if a := e.get(c, setup); a.code != http.StatusSeeOther || !strings.HasPrefix(a.location, "/signin?next=") {
			t.Fatalf("setup signed out: %d to %q", a.code, a.location)
		}
		form := e.signInForm(c)
		if a := e.do(c, http.MethodPost, "/signin", url.Values{"token": {e.Tokens["other"]}, "next": {setup}, "csrf": {form}}); a.location != setup {
			t.Fatalf("signed in, sent to %q, want back to %q", a.location, setup)
		}
		start := e.get(c, setup)
		if start.code != http.StatusSeeOther {
			t.Fatalf("setup: %d %s", start.code, start.body)
		}
		back, _ := strings.CutPrefix(e.authorize(c, start.location, login), e.URL)
		if a := e.get(c, back); a.code != want {
			t.Errorf("%s's return: %d %s, want %d", login, a.code, a.body, want)
		}
	}
	if in, ok, err := e.App.Store.InstallationOf(context.Background(), betaInstall); err != nil || !ok || in.Org != "other" || in.Account != "beta" {
		t.Fatalf("installation %d: %+v %v %v", betaInstall, in, ok, err)
	}
	e.Clock.Advance(11 * time.Second) // past the copies' memory of beta/site as no one's
	if code, body := e.Post("other", "createQueue", jsonOf(t, site)); code != http.StatusOK {
		t.Errorf("after the installation is recorded: %d %s", code, body)
	}
	if code, body := e.Post("acme", "getQueue", jsonOf(t, site)); code != http.StatusNotFound || body != "no repository github.com/beta/site in this organization" {
		t.Errorf("another organization: %d %s", code, body)
	}
	// An administrator's claim wins over the installation.
	if _, err := e.App.Store.ClaimRepo(context.Background(), "acme", "beta", "site", false); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(31 * time.Second)
	if code, body := e.Post("acme", "getQueue", jsonOf(t, site)); code != http.StatusNotFound || body != "no queue for branch main of github.com/beta/site" {
		t.Errorf("acme after its claim: %d %s, want its own repository's answer: no queue yet", code, body)
	}
	if code, body := e.Post("other", "getQueue", jsonOf(t, site)); code != http.StatusNotFound || body != "no repository github.com/beta/site in this organization" {
		t.Errorf("other after acme's claim: %d %s", code, body)
	}
	// Only an admin token records one.
	reader, _, err := e.App.Store.CreateScopedToken(context.Background(), "other", []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client()
	if a := e.do(c, http.MethodPost, "/signin", url.Values{"token": {reader}, "csrf": {e.signInForm(c)}}); a.code != http.StatusSeeOther {
		t.Fatalf("sign in with a read token: %d", a.code)
	}
	if a := e.get(c, setup); a.code != http.StatusForbidden || !strings.Contains(a.body, "Recording an installation needs the admin scope") {
		t.Errorf("setup with a read token: %d %s", a.code, a.body)
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
