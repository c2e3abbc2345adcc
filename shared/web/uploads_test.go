package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUploadPageLabelsItsFailures: an upload's page shows its counts and
// each failed test with its label and evidence (a known flaky test, a new
// one), names escaped, linked to the test's page; another organization's
// upload is not found.
func TestUploadPageLabelsItsFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.uploadFlaky()
	e.Clock.Advance(time.Minute)
	id := e.upload("4c0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "feature/y", 18, junit([]string{"test_login", "test_logout", "test_new"}, "test_login", "test_new"))
	c := e.client()
	e.signIn(c, "acme")
	a := e.get(c, "/acme/uploads/"+id)
	if a.code != http.StatusOK {
		t.Fatalf("%d %s", a.code, a.body)
	}
	_, table, _ := strings.Cut(a.body, "Was this failure mine?")
	for _, want := range []string{
		"pull request #18", "4c0c9d2",
		`<td class="label new"><b>new</b></td><td>no failure in the 7 days before this run: probably this change</td>`,
		`<td class="label known_flaky"><b>known flaky</b></td><td>flaky (pass-on-retry: failed and passed on commit 1f0c9d2 (main); recovery: `,
		`href="/acme/flaky-tests/test/` + e.testID("test_login") + `?repo=acme%2Fweb"`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the upload's page shows no %s:\n%s", want, table)
		}
	}
	// The new failure is listed first.
	if strings.Index(table, "test_new") > strings.Index(table, "test_login") {
		t.Errorf("new failures are not first:\n%s", table)
	}
	other := e.client()
	e.signIn(other, "other")
	for _, path := range []string{"/acme/uploads/" + id, "/other/uploads/" + id} {
		if a := e.get(other, path); a.code != http.StatusNotFound {
			t.Errorf("%s as other: %d", path, a.code)
		}
	}
}

// TestUploadPageSaysItShowsSome: an upload with more failed tests than its
// record keeps (store.MaxFailedTests) lists those it keeps, labelled, and
// says how many there were (html/template stopped at that sentence, whose
// fields it looked up on the list: the page was a 500).
func TestUploadPageSaysItShowsSome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var names, failing []string
	for i := range 66 {
		names = append(names, fmt.Sprintf("test_%02d", i))
		if i < 51 {
			failing = append(failing, names[i])
		}
	}
	id := e.upload("5c0c9d2e3b4a5968778695a4b3c2d1e0f9a8b7c6", "feature/z", 0, junit(names, failing...))
	c := e.client()
	e.signIn(c, "acme")
	a := e.get(c, "/acme/uploads/"+id)
	if a.code != http.StatusOK {
		t.Fatalf("%d %s", a.code, a.body)
	}
	if want := `<p class="note">The first 50 of 51 failed tests.</p>`; !strings.Contains(a.body, want) {
		_, table, _ := strings.Cut(a.body, "Was this failure mine?")
		t.Errorf("the page does not say %s:\n%s", want, table)
	}
	if rows := strings.Count(a.body, `<td class="label `); rows != 50 {
		t.Errorf("%d failed tests listed, want the 50 kept", rows)
	}
}
