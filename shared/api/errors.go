package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/mainguard/mainguard/shared/errs"
)

// statusOf is the one mapping from error codes to HTTP statuses.
var statusOf = map[errs.Code]int{
	errs.Invalid:          http.StatusBadRequest,
	errs.Unauthorized:     http.StatusUnauthorized,
	errs.Forbidden:        http.StatusForbidden,
	errs.NotFound:         http.StatusNotFound,
	errs.MethodNotAllowed: http.StatusMethodNotAllowed,
	errs.Conflict:         http.StatusConflict,
	errs.TooLarge:         http.StatusRequestEntityTooLarge,
	errs.UnsupportedMedia: http.StatusUnsupportedMediaType,
	errs.RateLimited:      http.StatusTooManyRequests,
	errs.Unavailable:      http.StatusServiceUnavailable,
	errs.Internal:         http.StatusInternalServerError,
}

// ErrorContentType is the literal content type of error bodies that the
// public API description gives (sic: not text/plain).
const ErrorContentType = "application/plain-text"

// WriteError answers err as plain text with the status of its code. Only a
// domain error's message reaches the client; a 503 says when to try
// again (Retry-After); anything else is "internal
// error" with the request id, and its detail goes to the request's log line.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := errs.CodeOf(err)
	status, ok := statusOf[code]
	if !ok {
		status, code = http.StatusInternalServerError, errs.Internal
	}
	msg := errs.MessageOf(err)
	switch code {
	case errs.Internal:
		msg = fmt.Sprintf("internal error (request id %s)", RequestID(r.Context()))
	case errs.Unavailable:
		msg = fmt.Sprintf("%s (request id %s)", msg, RequestID(r.Context()))
	}
	if info := infoOf(r.Context()); info != nil {
		info.err = err
	}
	w.Header().Set("Content-Type", ErrorContentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		// A store outage or contention: worth trying again, not at once.
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// RetryAfterSeconds is what a 503 tells a client to wait before trying
// again: long enough for a throttled table or a restarted store to answer.
const RetryAfterSeconds = 5
