package github_test

import (
	"testing"

	"github.com/mainguard/mainguard/shared/github"
)

// FuzzParseEvent: any body, any event name, no panic; a parsed event of a
// reacted-to kind always names its repository's fields as sent.
func FuzzParseEvent(f *testing.F) {
	f.Add("pull_request", []byte(`{"action":"closed","pull_request":{"number":1,"merged":true},"repository":{"name":"app","owner":{"login":"acme"}}}`))
	f.Add("push", []byte(`{"ref":"refs/heads/main","repository":{"full_name":"acme/app"}}`))
	f.Add("check_run", []byte(`{"check_run":null,"repository":{}}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		ev, err := github.ParseEvent(event, body)
		if err == nil && !ev.Ignored && ev.Kind != event {
			t.Errorf("kind %q for event %q", ev.Kind, event)
		}
		_ = github.VerifySignature([]byte("k"), body, event)
	})
}
