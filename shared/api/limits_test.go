package api

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestFailedAuthenticationIsLimitedPerAddress: an address that keeps
// presenting bad tokens gets 429 with Retry-After once its burst is spent;
// another address, and a good token from elsewhere, are not affected.
func TestFailedAuthenticationIsLimitedPerAddress(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	s := &Server{Auth: staticAuth{"good": "acme"}, Log: slog.New(slog.DiscardHandler), Now: clock,
		AuthFailures: &RateLimiter{Rate: 1, Burst: 3, Now: clock}}
	h := Lambda(s.Wrap(Endpoint{Name: "t", Method: "POST", Path: "/t", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}))
	call := func(token, ip string) (int, string) {
		ev := post("{}", false)
		ev.Headers["x-api-token"] = token
		ev.RequestContext.HTTP.SourceIP = ip
		resp, _ := h(context.Background(), ev)
		return resp.StatusCode, resp.Headers["retry-after"]
	}
	for i := range 3 {
		if code, _ := call("bad", "203.0.113.7"); code != 401 {
			t.Fatalf("bad token %d: %d, want 401", i, code)
		}
	}
	if code, wait := call("bad", "203.0.113.7"); code != 429 || wait == "" {
		t.Errorf("fourth bad token: %d (Retry-After %q), want 429 with Retry-After", code, wait)
	}
	if code, _ := call("bad", "198.51.100.1"); code != 401 {
		t.Errorf("another address: %d, want 401", code)
	}
	if code, _ := call("good", "198.51.100.2"); code != 200 {
		t.Errorf("a good token elsewhere: %d", code)
	}
	now = now.Add(time.Second)
	if code, _ := call("good", "203.0.113.7"); code != 200 {
		t.Errorf("a good token from the address once a token refilled: %d", code)
	}
}
