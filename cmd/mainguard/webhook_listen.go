package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// webhookListen is `mainguard webhook listen`: a receiver to try webhooks
// with. It verifies each delivery with the endpoint's secret, prints one
// line for it, and answers 204, or 401 when the signature does not verify.
func webhookListen(e *env, args []string) error {
	f := newFlags(cmdOf("webhook listen"))
	addr := f.String("addr", "127.0.0.1:8090", "address to listen on")
	secret := f.String("secret", e.getenv("MAINGUARD_WEBHOOK_SECRET"), "the endpoint's signing secret, whsec_… (default $MAINGUARD_WEBHOOK_SECRET)")
	count := f.Int("count", 0, "stop after this many verified deliveries (0: run until Ctrl-C)")
	body := f.Bool("body", false, "print each delivery's JSON body too")
	f.require("secret")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	if *count < 0 {
		return usageError("webhook listen: --count must be 0 or more")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", *addr, err)
	}
	var mu sync.Mutex
	verified := 0
	done := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		now := e.now()
		if err := webhooks.Verify(*secret, r.Header, b, now); err != nil {
			fmt.Fprintf(e.stdout, "%s refused a delivery: %s\n", now.UTC().Format(time.RFC3339), errs.MessageOf(err))
			http.Error(w, errs.MessageOf(err), http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &ev)
		fmt.Fprintf(e.stdout, "%s %s %s verified\n", now.UTC().Format(time.RFC3339), ev.Type, r.Header.Get("webhook-id"))
		if *body {
			fmt.Fprintf(e.stdout, "%s\n", b)
		}
		w.WriteHeader(http.StatusNoContent)
		if verified++; verified == *count {
			close(done)
		}
	})}
	fmt.Fprintf(e.stdout, "listening for webhooks on http://%s/ (Ctrl-C stops)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-done:
	case <-e.ctx.Done():
	}
	// Shutdown, not Close: the last delivery's answer is still being
	// written, and the sender would retry a delivery cut off.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
