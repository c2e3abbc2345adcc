package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzEndpoints sends arbitrary bodies to both test endpoints through the
// whole stack: no input may make a handler panic or answer 500, and every
// error is plain text. Seeds are the golden requests.
func FuzzEndpoints(f *testing.F) {
	reqs, _ := filepath.Glob("testdata/*/*.request.json")
	for _, p := range reqs {
		raw, _ := os.ReadFile(p)
		f.Add(strings.Contains(p, "link-ticket"), string(raw))
	}
	f.Add(false, `{"repo":{"host":"github.com","owner":"Acme","name":"web"},"org_url_slug":"acme","test_id":"06cb6db5-f807-5198-b072-af67a0636f8a"}`)
	f.Add(true, `{"test_case_id":"06cb6db5-f807-5198-b072-af67a0636f8a","external_ticket_id":"A_B-1","repo":{"host":"h","owner":"o/p","name":"n"}}`)
	f.Add(false, `{"repo":{"host":null,"owner":[],"name":{}},"test_id":"`+strings.Repeat("a", 10000)+`"}`)
	h := newHarness(f, nil)
	f.Fuzz(func(t *testing.T, link bool, body string) {
		name, path := "get-test-details", "/flaky-tests/get-test-details"
		if link {
			name, path = "link-ticket-to-test-case", "/flaky-tests/link-ticket-to-test-case"
		}
		ev := event(path, nil)
		ev.Body = body
		resp := h.call(t, name, ev)
		if resp.StatusCode >= 500 {
			t.Fatalf("%s answered %d %q to %q", name, resp.StatusCode, resp.Body, body)
		}
		if resp.StatusCode != 200 && resp.Headers["content-type"] != "application/plain-text" {
			t.Fatalf("error without plain text: %d %v", resp.StatusCode, resp.Headers)
		}
	})
}
