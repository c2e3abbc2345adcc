// Package errs owns the service's error vocabulary: a small set of codes that
// every layer uses, and that only the api package turns into HTTP statuses.
package errs

import (
	"errors"
	"fmt"
)

// Code classifies an error by what the client can do about it.
type Code string

// The codes. Each maps to exactly one HTTP status in the api package.
const (
	Invalid          Code = "invalid"            // 400: the request is wrong
	Unauthorized     Code = "unauthorized"       // 401: no or bad token
	Forbidden        Code = "forbidden"          // 403: a signed address that does not verify
	NotFound         Code = "not_found"          // 404: absent, or another tenant's
	MethodNotAllowed Code = "method_not_allowed" // 405
	Conflict         Code = "conflict"           // 409: a condition failed
	TooLarge         Code = "too_large"          // 413
	UnsupportedMedia Code = "unsupported_media"  // 415
	RateLimited      Code = "rate_limited"       // 429
	Unavailable      Code = "unavailable"        // 503: a dependency is down
	Internal         Code = "internal"           // 500: a bug or an unexpected failure
)

// Error is a domain error: Message is safe to show to a client; Cause is for
// the log only and never leaves the process.
type Error struct {
	Code    Code
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// E builds an error of code c with a client-facing message.
func E(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an error of code c that keeps cause for the log.
func Wrap(c Code, cause error, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// CodeOf returns the code of err: Internal for anything that is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries code c.
func Is(err error, c Code) bool { return err != nil && CodeOf(err) == c }

// MessageOf returns the client-facing message of err, or "" for errors that
// are not domain errors (their text must never reach a client).
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}
