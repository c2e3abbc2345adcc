package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultTimeout is how long a receiver has to answer (contract 4).
const DefaultTimeout = 15 * time.Second

// NewClient returns the HTTP client deliveries go through: every dial passes
// the guard, no proxy (it would dial for us, unchecked) and no redirects (a
// 3xx is the receiver's answer, a failed attempt).
func NewClient(g Guard) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           g.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: DefaultTimeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Sender makes single delivery attempts.
type Sender struct {
	// Client sends; nil uses NewClient(Guard{}), the deployed guard
	// (public addresses only).
	Client *http.Client
	// Timeout bounds one attempt, answer and body included; 0 is
	// DefaultTimeout.
	Timeout time.Duration
	// Now stamps webhook-timestamp and measures latency; nil is time.Now.
	// Receivers check the timestamp against their own clock, so it must be
	// the real time of sending.
	Now func() time.Time
}

// Result is the outcome of one attempt, as the delivery log keeps it.
type Result struct {
	At         time.Time
	StatusCode int // 0 when no answer came
	Latency    time.Duration
	Err        string // why the attempt failed; "" when delivered
}

// Delivered reports whether the receiver acknowledged the message (2xx).
func (r Result) Delivered() bool { return r.Err == "" }

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sender) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

var defaultClient = NewClient(Guard{})

// maxErrText bounds the error text kept in the delivery log.
const maxErrText = 300

// Send POSTs body to url signed with secrets under message id, once.
func (s *Sender) Send(ctx context.Context, url string, secrets []string, id string, body []byte) Result {
	start := s.now()
	res := Result{At: start}
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err == nil {
		err = SetHeaders(req.Header, secrets, id, start, body)
	}
	if err != nil {
		res.Err = truncate("bad request: " + err.Error())
		return res
	}
	client := s.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err == nil {
		// Read (a bounded part of) the answer so the connection is reused
		// and a slow body counts against the timeout too.
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		res.StatusCode = resp.StatusCode
	}
	res.Latency = s.now().Sub(start)
	// The log is the tenant's to read: it names what happened, never the
	// dial error's text, which would tell a tenant what answers inside our
	// network (connection refused here, a timeout there).
	switch {
	case errors.Is(err, ErrRefused):
		res.Err = "refused: " + ErrRefused.Error()
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Err = fmt.Sprintf("no answer within %v", s.timeout())
	case err != nil:
		res.Err = "connection failed"
	case res.StatusCode < 200 || res.StatusCode > 299:
		res.Err = fmt.Sprintf("HTTP %d", res.StatusCode)
	}
	return res
}

func truncate(s string) string {
	if len(s) > maxErrText {
		return s[:maxErrText] + "…"
	}
	return s
}
