package testkit

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

var (
	formAction    = regexp.MustCompile(`action="([^"]+)"`)
	manifestValue = regexp.MustCompile(`name="manifest" value="([^"]+)"`)
)

// CreateGitHubApp is a person's browser on `mainguard github app-setup`'s
// page: it reads the page at page, posts its manifest form to GitHub (the
// GitHub test server), and follows GitHub's redirect back to the page's
// callback. It returns the form's address and GitHub's redirect.
func CreateGitHubApp(tb testing.TB, page string) (action, redirect string) {
	tb.Helper()
	resp, err := http.Get(page)
	if err != nil {
		tb.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	form, value := formAction.FindSubmatch(body), manifestValue.FindSubmatch(body)
	if form == nil || value == nil {
		tb.Fatalf("the setup page has no manifest form:\n%s", body)
	}
	action = html.UnescapeString(string(form[1]))
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = browser.PostForm(action, url.Values{"manifest": {html.UnescapeString(string(value[1]))}})
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	redirect = resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || redirect == "" {
		tb.Fatalf("GitHub answered the manifest with %d, Location %q", resp.StatusCode, redirect)
	}
	resp, err = http.Get(redirect)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("the setup's callback answered %d", resp.StatusCode)
	}
	return action, redirect
}
