package app_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// appLink is a link to the web app in a golden file (PUBLIC_APP_URL is
// https://app.mainguard.test in the harness).
var appLink = regexp.MustCompile(`https://app\.mainguard\.test(/[^"\s\\]*)`)

// formToken finds a form's CSRF token in a page.
var formToken = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestGoldenLinksOpen: every html_url and http_details_url of the golden
// files opens a page (200) of the web app, signed in as acme. The data
// they were written from is made again: the harness's seed, and each
// event scenario on its own harness; each link must open on one of them.
func TestGoldenLinksOpen(t *testing.T) {
	t.Parallel()
	links := map[string]bool{} // path → opened
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range appLink.FindAllStringSubmatch(string(b), -1) {
			links[m[1]] = false
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(links) < 2 {
		t.Fatalf("only %d links to the web app in the golden files", len(links))
	}
	open := func(h *harness) {
		mux := h.app.Mux()
		// The form first, as a browser opens it: its cookie and token.
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/signin", nil))
		form := formToken.FindStringSubmatch(w.Body.String())
		if w.Code != http.StatusOK || form == nil || len(w.Result().Cookies()) != 1 {
			t.Fatalf("sign-in form: %d %s", w.Code, w.Body)
		}
		signIn := httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(url.Values{"token": {h.tokens["{{TOKEN}}"]}, "csrf": {form[1]}}.Encode()))
		signIn.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		signIn.AddCookie(w.Result().Cookies()[0])
		w = httptest.NewRecorder()
		mux.ServeHTTP(w, signIn)
		cookies := w.Result().Cookies()
		if w.Code != http.StatusSeeOther || len(cookies) != 1 {
			t.Fatalf("sign in: %d %s", w.Code, w.Body)
		}
		for path, opened := range links {
			if opened {
				continue // on an earlier harness
			}
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.AddCookie(cookies[0])
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			if w.Code == http.StatusOK {
				links[path] = true
			}
		}
	}
	seeded := newHarness(t, nil)
	seeded.seedQueues(t)
	open(seeded)
	for _, sc := range eventScenarios {
		if allOpened(links) {
			break // every link of every golden file opened already
		}
		open(runScenario(t, sc, func(*harness) {}))
	}
	for path, opened := range links {
		if !opened {
			t.Errorf("%s does not open on any harness", path)
		}
	}
}

func allOpened(links map[string]bool) bool {
	for _, opened := range links {
		if !opened {
			return false
		}
	}
	return true
}
