package webhooks_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/webhooks"
)

func TestNewSecretShape(t *testing.T) {
	t.Parallel()
	a, b := webhooks.NewSecret(), webhooks.NewSecret()
	if a == b {
		t.Fatal("two secrets alike")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(raw) != 24 {
		t.Errorf("secret %q: want whsec_ and base64 of 24 bytes (%v)", a, err)
	}
}

// TestSignatureVerifiesWithSvix checks our headers against the official
// Svix library, which is what receivers run.
func TestSignatureVerifiesWithSvix(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"type":"pull_request.merged","pr_number":7}`)
	now := time.Now() // Svix checks the timestamp against the real clock
	headers := func(secrets []string, ts time.Time) http.Header {
		t.Helper()
		h := http.Header{}
		if err := webhooks.SetHeaders(h, secrets, "evt_1", ts, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	verify := func(secret string, payload []byte, h http.Header) error {
		t.Helper()
		wh, err := svix.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		return wh.Verify(payload, h)
	}

	h := headers([]string{newSecret}, now)
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "svix-id", "svix-timestamp", "svix-signature"} {
		if h.Get(name) == "" {
			t.Errorf("header %s missing", name)
		}
	}
	if h.Get("Content-Type") != "application/json" || h.Get("webhook-id") != "evt_1" || !strings.HasPrefix(h.Get("webhook-signature"), "v1,") {
		t.Errorf("headers %v", h)
	}
	// Only the webhook- names: the library falls back to them.
	std := http.Header{}
	for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		std.Set(k, h.Get(k))
	}
	cases := []struct {
		name    string
		secret  string
		payload []byte
		h       http.Header
		ok      bool
	}{
		{"svix headers", newSecret, body, h, true},
		{"webhook- headers only", newSecret, body, std, true},
		{"tampered body", newSecret, []byte(strings.Replace(string(body), "7", "8", 1)), h, false},
		{"other secret", oldSecret, body, h, false},
		{"timestamp 10 minutes old", newSecret, body, headers([]string{newSecret}, now.Add(-10*time.Minute)), false},
		{"rotation: new secret", newSecret, body, headers([]string{newSecret, oldSecret}, now), true},
		{"rotation: old secret", oldSecret, body, headers([]string{newSecret, oldSecret}, now), true},
	}
	for _, c := range cases {
		if err := verify(c.secret, c.payload, c.h); (err == nil) != c.ok {
			t.Errorf("%s: verify = %v, want ok=%v", c.name, err, c.ok)
		}
	}
	if _, err := webhooks.Signature([]string{"not-a-secret"}, "evt_1", now, body); !errs.Is(err, errs.Invalid) {
		t.Errorf("bad secret: %v", err)
	}
}

// TestVerifyAgreesWithSvix holds our receiver's check to the official Svix
// library's: each delivery is accepted by both or refused by both.
func TestVerifyAgreesWithSvix(t *testing.T) {
	t.Parallel()
	secret, other := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"type":"test_case.ticket_linked"}`)
	now := time.Now() // Svix checks the timestamp against the real clock
	signed := func(secrets []string, ts time.Time) http.Header {
		h := http.Header{}
		if err := webhooks.SetHeaders(h, secrets, "msg_1", ts, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	svixOnly := signed([]string{secret}, now)
	for _, p := range []string{"id", "timestamp", "signature"} {
		svixOnly.Del("webhook-" + p)
	}
	cases := []struct {
		name   string
		h      http.Header
		body   []byte
		accept bool
	}{
		{"signed", signed([]string{secret}, now), body, true},
		{"during a rotation", signed([]string{other, secret}, now), body, true},
		{"svix- headers only", svixOnly, body, true},
		{"another secret", signed([]string{other}, now), body, false},
		{"body changed", signed([]string{secret}, now), []byte(`{"type":"x"}`), false},
		{"ten minutes old", signed([]string{secret}, now.Add(-10*time.Minute)), body, false},
		{"ten minutes ahead", signed([]string{secret}, now.Add(10*time.Minute)), body, false},
		{"no headers", http.Header{}, body, false},
	}
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ours := webhooks.Verify(secret, c.h, c.body, now)
			theirs := wh.Verify(c.body, c.h)
			if (ours == nil) != c.accept || (theirs == nil) != c.accept {
				t.Errorf("accept = %v; ours: %v, Svix: %v", c.accept, ours, theirs)
			}
			if ours != nil && !errs.Is(ours, errs.Unauthorized) {
				t.Errorf("refusal is %v, want unauthorized", ours)
			}
		})
	}
}
