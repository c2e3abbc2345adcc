package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// APIError is an error answer from GitHub, translated at the boundary so no
// go-github type leaks to callers. It is the Cause of the errs.Error the
// operations return.
type APIError struct {
	Status  int    // HTTP status
	Message string // GitHub's "message"
	// Retry and RetryAfter are the classification Retryable reports.
	Retry      bool
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("github: %d %s", e.Status, e.Message)
}

// Sentinels for the outcomes callers branch on; test with errors.Is.
var (
	// ErrNotMergeable: GitHub refused the merge (405): conflicts, a draft, a
	// closed pull request, or branch protection.
	ErrNotMergeable = errors.New("pull request is not mergeable")
	// ErrHeadChanged: the pull request's head is not the sha the merge was
	// pinned to (409), or it was merged at another head.
	ErrHeadChanged = errors.New("pull request head changed")
)

// ConflictError reports that a pull request's head does not merge into the
// test branch being built.
type ConflictError struct {
	PR  int
	SHA string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("pull request #%d (%s) conflicts with the test branch", e.PR, e.SHA)
}

// secondaryWait is the wait GitHub documents for a secondary rate limit that
// names no retry-after: at least one minute.
const secondaryWait = time.Minute

// wrap translates an error from go-github or the transport into an errs
// error whose cause is an *APIError (for answers) or the transport error.
// what names the operation for the client-facing message.
func (c *Client) wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return errs.Wrap(errs.Unavailable, err, "github: %s: cancelled", what)
	}
	var h *heldError
	if errors.As(err, &h) {
		return errs.Wrap(errs.Unavailable, &APIError{Message: h.Error(), Retry: true, RetryAfter: max(h.until.Sub(c.now()), 0)},
			"github: %s: rate limited, not calling GitHub before %s", what, h.until.UTC().Format(time.RFC3339))
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		wait := max(rl.Rate.Reset.Time.Sub(c.now()), 0)
		if ra := retryAfterHeader(rl.Response); ra > 0 {
			wait = ra
		}
		return errs.Wrap(errs.Unavailable, &APIError{Status: statusOf(rl.Response), Message: rl.Message, Retry: true, RetryAfter: wait},
			"github: %s: rate limited", what)
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		wait := secondaryWait
		if ab.RetryAfter != nil {
			wait = *ab.RetryAfter
		}
		return errs.Wrap(errs.Unavailable, &APIError{Status: statusOf(ab.Response), Message: ab.Message, Retry: true, RetryAfter: wait},
			"github: %s: secondary rate limit", what)
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) {
		msg := er.Message
		for i, e := range er.Errors { // a 422's errors[]: what GitHub refused, for the log
			sep := "; "
			if i == 0 {
				sep = ": "
			}
			msg += sep + strings.Trim(e.Resource+"."+e.Field, ".") + " " + cmp.Or(e.Message, e.Code)
		}
		return c.fromStatus(statusOf(er.Response), msg, er.Response, what)
	}
	var ae *gh.AcceptedError
	if errors.As(err, &ae) {
		// 202: GitHub is still computing the answer; ask again shortly.
		return errs.Wrap(errs.Unavailable, &APIError{Status: 202, Message: "accepted", Retry: true, RetryAfter: time.Second},
			"github: %s: not ready", what)
	}
	// No answer at all: timeouts, refused or reset connections, cut bodies.
	return errs.Wrap(errs.Unavailable, err, "github: %s: unreachable", what)
}

func (c *Client) fromStatus(status int, message string, resp *http.Response, what string) error {
	e := &APIError{Status: status, Message: message}
	code := errs.Internal
	switch {
	case status >= 500:
		code, e.Retry, e.RetryAfter = errs.Unavailable, true, retryAfterHeader(resp)
	case status == http.StatusTooManyRequests:
		// A 429 without rate-limit headers or documentation link is still a
		// request to slow down.
		code, e.Retry, e.RetryAfter = errs.Unavailable, true, max(retryAfterHeader(resp), secondaryWait)
	case status == http.StatusNotFound:
		code = errs.NotFound
	case status == http.StatusConflict, status == http.StatusMethodNotAllowed:
		code = errs.Conflict
	case status == http.StatusUnprocessableEntity, status == http.StatusBadRequest:
		code = errs.Invalid
	}
	return errs.Wrap(code, e, "github: %s: %d %s", what, status, message)
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

func retryAfterHeader(r *http.Response) time.Duration {
	if r == nil {
		return 0
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// statusIs reports whether err is a GitHub answer with that HTTP status.
func statusIs(err error, status int) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == status
}

// Retryable reports whether an operation that failed with err may succeed if
// tried again, and how long to wait first (0: at once, with the caller's own
// backoff). Server errors, rate limits (primary: until x-ratelimit-reset;
// secondary: retry-after, else a minute), timeouts and connection failures
// are retryable; GitHub's refusals (404, 405, 409, 422, 401, 403) and
// cancellation are not.
func Retryable(err error) (retry bool, after time.Duration) {
	if err == nil || errors.Is(err, context.Canceled) {
		return false, 0
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.Retry, api.RetryAfter
	}
	var ce *ConflictError
	if errors.As(err, &ce) || errors.Is(err, ErrNotMergeable) || errors.Is(err, ErrHeadChanged) {
		return false, 0
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true, 0
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true, 0
	}
	return errs.Is(err, errs.Unavailable), 0
}

// held remembers, per token, until when GitHub asked not to be called: a
// rate limit's reset (primary) or its retry-after (secondary). A call
// before then fails at once with a retryable error and never reaches
// GitHub, which warns that calling on while limited may get an
// integration banned; every queue of the token waits, not only the one
// whose call was refused.
type held struct {
	mu    sync.Mutex
	until map[string]time.Time // token →
}

// heldError is a call kept from GitHub by held.
type heldError struct{ until time.Time }

func (e *heldError) Error() string {
	return "rate limited until " + e.until.UTC().Format(time.RFC3339)
}

// check refuses a call with tok before the time GitHub named.
func (h *held) check(tok string, now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.until[tok]
	switch {
	case !ok:
		return nil
	case now.Before(until):
		return &heldError{until: until}
	}
	delete(h.until, tok)
	return nil
}

// observe holds tok when resp is a rate limit: a 403 or 429 with a
// retry-after (secondary; GitHub may send it with the primary too), or
// with no request left before x-ratelimit-reset (primary).
func (h *held) observe(tok string, resp *http.Response, now time.Time) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return
	}
	var until time.Time
	if ra := retryAfterHeader(resp); ra > 0 {
		until = now.Add(ra)
	} else if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			until = time.Unix(reset, 0)
		}
	}
	if !until.After(now) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.until == nil {
		h.until = map[string]time.Time{}
	}
	h.until[tok] = until
}
