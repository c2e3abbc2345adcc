package webhooks_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// received is one request as the receiver saw it.
type received struct {
	ID, Body  string
	VerifyErr error // from the official Svix library
	Status    int   // what the receiver answered
}

// receiver is a webhook endpoint that verifies every request with the
// official Svix library and answers what answer says for the n-th request
// (1-based); answer returning 0 holds the request until the client gives up.
type receiver struct {
	srv    *httptest.Server
	secret string
	answer func(n int) int

	mu  sync.Mutex
	got []received
}

func newReceiver(tb testing.TB, secret string, answer func(n int) int) *receiver {
	tb.Helper()
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		tb.Fatal(err)
	}
	rc := &receiver{secret: secret, answer: answer}
	release := make(chan struct{})
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got) + 1
		status := rc.answer(n)
		rc.got = append(rc.got, received{ID: r.Header.Get("webhook-id"), Body: string(body), VerifyErr: wh.Verify(body, r.Header), Status: status})
		rc.mu.Unlock()
		if status == 0 {
			select { // hang until the sender gives up
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.WriteHeader(status)
	}))
	tb.Cleanup(rc.srv.Close)
	tb.Cleanup(func() { close(release) }) // runs first: frees hung handlers
	return rc
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func always(status int) func(int) int { return func(int) int { return status } }

// sequence answers the given statuses in turn, then the last one forever.
func sequence(statuses ...int) func(int) int {
	return func(n int) int { return statuses[min(n, len(statuses))-1] }
}

var bg = context.Background()
