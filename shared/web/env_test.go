package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit/service"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
	"github.com/mainguard/mainguard/shared/testhealth/bundle"
)

func TestMain(m *testing.M) {
	code := storetest.Main(m)
	closeBrowser()
	os.Exit(code)
}

var t0 = time.Date(2026, 7, 23, 9, 0, 0, 0, time.UTC)

const repoFull = "acme/web"

// hostile is in stored values a page shows: it must come out as text.
const hostile = `<script>alert("x")</script>`

// env is the whole service (internal/testkit/service) served on a real
// listener, as mainguard serve serves it, with PUBLIC_APP_URL its own
// address: the organizations acme and other, a simulated GitHub with
// acme/web.
type env struct {
	*service.Service
	tb  testing.TB
	URL string
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	s := service.New(tb, service.Options{Start: t0, Repos: []string{repoFull}, Orgs: []string{"acme", "other"},
		Env: map[string]string{"PUBLIC_APP_URL": base, "PUBLIC_API_URL": base + "/v1", "BUNDLE_DIR": tb.TempDir()}})
	srv := httptest.NewUnstartedServer(s.Mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	tb.Cleanup(srv.Close)
	return &env{Service: s, tb: tb, URL: base}
}

// client is a browser-like HTTP client: cookies kept, redirects not
// followed, so tests see each answer.
func (e *env) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signInForm opens the sign-in form as c, as a browser does before it
// posts it, and returns the form's CSRF token.
func (e *env) signInForm(c *http.Client) string {
	e.tb.Helper()
	m := csrfRE.FindStringSubmatch(e.get(c, "/signin").body)
	if m == nil {
		e.tb.Fatal("no CSRF token in the sign-in form")
	}
	return m[1]
}

// signIn signs c in with org's token, through the form.
func (e *env) signIn(c *http.Client, org string) {
	e.tb.Helper()
	resp := e.do(c, http.MethodPost, "/signin", url.Values{"token": {e.Tokens[org]}, "csrf": {e.signInForm(c)}})
	if resp.code != http.StatusSeeOther {
		e.tb.Fatalf("sign in as %s: %d %s", org, resp.code, resp.body)
	}
}

type answer struct {
	code     int
	body     string
	location string
	header   http.Header
}

// do sends a request of path with form (POST when not nil).
func (e *env) do(c *http.Client, method, path string, form url.Values) answer {
	e.tb.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		e.tb.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// The pages' writer shows a value of the wrong type for its verb as
	// %!s(BAD) rather than panic mid-page: no page a test reads holds one.
	if i := bytes.Index(b, []byte("(BAD)")); i >= 0 {
		e.tb.Errorf("%s %s: the page writes a value of the wrong type for its verb: …%s…", method, path, b[max(0, i-80):i+5])
	}
	return answer{code: resp.StatusCode, body: string(b), location: resp.Header.Get("Location"), header: resp.Header}
}

func (e *env) get(c *http.Client, path string) answer {
	e.tb.Helper()
	return e.do(c, http.MethodGet, path, nil)
}

// api calls the API as org and fails unless it answers 200.
func (e *env) api(org, path string, body any) string {
	e.tb.Helper()
	b, _ := json.Marshal(body)
	code, out := e.Post(org, path, b)
	if code != http.StatusOK {
		e.tb.Fatalf("%s: %d %s", path, code, out)
	}
	return out
}

var webRepo = map[string]string{"host": "github.com", "owner": "acme", "name": "web"}

// upload sends JUnit XML as CI would: createBundleUpload, then the PUT to
// the signed address (the local server ingests it at once); it answers
// the upload's id.
func (e *env) upload(sha, branch string, pr int, junit string) string {
	e.tb.Helper()
	var c struct{ ID, URL string }
	out := e.api("acme", "metrics/createBundleUpload", map[string]any{"repo": webRepo, "orgUrlSlug": "acme", "clientVersion": "0.10.2", "remoteUrls": []string{}})
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		e.tb.Fatal(err)
	}
	meta := bundle.Meta{Org: "acme", BundleUploadID: c.ID, UploadTime: e.Clock.Now(),
		Repo: bundle.Repo{Host: "github.com", Owner: "acme", Name: "web", HeadSHA: sha, HeadBranch: branch}}
	if pr > 0 {
		meta.Envs = map[string]string{"GITHUB_REF": fmt.Sprintf("refs/pull/%d/merge", pr)}
	}
	var buf bytes.Buffer
	if err := bundle.Write(&buf, bundle.WriteInput{Meta: meta, JUnit: []bundle.File{{OriginalPath: "junit.xml", Body: []byte(junit)}}}); err != nil {
		e.tb.Fatal(err)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		e.tb.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, e.URL+u.RequestURI(), &buf)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.tb.Fatalf("PUT bundle: %d", resp.StatusCode)
	}
	return c.ID
}

// junit is a report of tests, those named in failed failing.
func junit(tests []string, failed ...string) string {
	var b strings.Builder
	b.WriteString(`<testsuites><testsuite name="suite">`)
	for _, name := range tests {
		n := xmlEscape(name)
		fail := false
		for _, f := range failed {
			fail = fail || f == name
		}
		if fail {
			b.WriteString(`<testcase classname="pkg" name="` + n + `" file="src/login_test.go" time="1.5"><failure message="timeout ` + xmlEscape(hostile) + `">timed out after 30s ` + xmlEscape(hostile) + `</failure></testcase>`)
		} else {
			b.WriteString(`<testcase classname="pkg" name="` + n + `" file="src/login_test.go" time="0.5"/>`)
		}
	}
	b.WriteString(`</testsuite></testsuites>`)
	return b.String()
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// uploadFlaky makes test_login and the hostile-named test flaky on
// acme/web: each fails and then passes on one commit (pass-on-retry).
func (e *env) uploadFlaky() {
	e.tb.Helper()
	tests := []string{"test_login", "test_logout", hostile}
	sha := "1f0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6"
	e.Clock.Advance(time.Minute)
	e.upload(sha, "main", 0, junit(tests, "test_login", hostile))
	e.Clock.Advance(time.Minute)
	e.upload(sha, "main", 0, junit(tests))
	e.Clock.Advance(time.Minute)
	e.upload("2a0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "feature/x", 17, junit(tests, "test_login"))
}

// testID is the id of the test named name on acme/web.
func (e *env) testID(name string) string {
	e.tb.Helper()
	ref := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	for _, status := range []string{testhealth.Flaky, testhealth.Broken} {
		page, err := e.App.Store.ListUnhealthy(context.Background(), "acme", ref, status, store.PageQuery{Limit: 100})
		if err != nil {
			e.tb.Fatal(err)
		}
		for _, tc := range page.Tests {
			if tc.Name == name {
				return tc.ID
			}
		}
	}
	e.tb.Fatalf("no unhealthy test %q", name)
	return ""
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
