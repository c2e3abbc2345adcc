package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store/billing"
)

// The request body limit is what a deployed function can receive, not the
// contract's 20 MiB (a deliberate deviation, docs/api.md section 8):
//
//   - Lambda refuses a synchronous invoke whose payload, the API Gateway
//     event, is over 6 MB, which Lambda counts as 6,291,456 bytes
//     (LambdaPayload; its RequestEntityTooLargeException says "Request must
//     be smaller than 6291456 bytes").
//   - The event carries the request line and headers besides the body. An
//     HTTP API takes at most 10,240 bytes of request line and header values;
//     a payload 2.0 event repeats the path, the query and the user agent,
//     and JSON-escapes every value, so they take at most about 41 KB, and
//     EventReserve (64 KiB) keeps room for the header names and the event's
//     own fields too.
//   - The body is counted as the event carries it (BodySizeInEvent): a text
//     body JSON-escaped, a body of any other media type base64-encoded,
//     four bytes for three.
//
// So MaxBody, 6,225,920 bytes of body in the event, always reaches a
// deployed function: 6,225,920 bytes of JSON without quotes or
// backslashes, 4,669,440 bytes (MaxBinaryBody) of anything else. A larger
// body gets the 413 below wherever it still reaches a function (and the
// local server, which enforces the same); one whose event is over 6 MB gets
// API Gateway's own error, as no function sees it. Bundles go to S3 by
// their signed address and are not affected.
const (
	LambdaPayload = 6 << 20
	EventReserve  = 64 << 10
	MaxBody       = LambdaPayload - EventReserve
	MaxBinaryBody = MaxBody / 4 * 3
)

// errTooLarge is the one answer to a body over MaxBody, whether its declared
// length, its reading or its size in the event shows it.
func errTooLarge() error {
	return errs.E(errs.TooLarge, "request body is larger than a deployed function can receive: %d bytes as API Gateway passes it on "+
		"(text JSON-escaped, other media types base64-encoded, so %d bytes of those)", MaxBody, MaxBinaryBody)
}

// BodySizeInEvent is the size a body takes in the API Gateway event that
// carries it: base64's four bytes for every three (padded), or the text
// JSON-escaped (each quote, backslash and control character as its escape).
func BodySizeInEvent(body string, base64Encoded bool) int64 {
	if base64Encoded {
		return int64(len(body))
	}
	n := int64(len(body))
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++ // a two-character escape
		case c < 0x20:
			n += 5 // \u00XX
		}
	}
	return n
}

// Endpoint is one route of the API, served by one function.
type Endpoint struct {
	Name   string // the function's folder under functions/
	Method string // GET, POST or PUT; "" for any (the web app checks its own)
	Path   string // below /v1, e.g. /flaky-tests/get-test-details
	Public bool   // true: no x-api-token (status, signed PUT, GitHub webhook)
	// Scope is what a token must hold to call it ("" on public endpoints).
	Scope Scope
	// LocalOnly endpoints exist only on the local server (the bundle PUT,
	// which S3 answers when deployed): no function, no route in AWS.
	LocalOnly bool
	// MaxBody, when set, replaces the body limit of the functions (the
	// local bundle PUT, which stands for S3, takes a whole bundle).
	MaxBody int64
	Handler http.Handler
}

// Authenticator resolves an API token to its organization and scopes.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// Server wraps endpoints in the middleware every request passes.
type Server struct {
	Auth    Authenticator
	Limiter *OrgLimiter // nil: no rate limit
	// AuthFailures limits failed authentications per client address (nil:
	// no limit): a client guessing tokens gets 429 after a burst, while a
	// valid token from the same address still works.
	AuthFailures *FailureLimiter
	Log          *slog.Logger
	Now          func() time.Time
}

// Wrap returns ep's handler behind the shared middleware.
func (s *Server) Wrap(ep Endpoint) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		ctx, usage := billing.WithUsage(r.Context())
		ctx, bill := billing.WithBill(ctx)
		info := &reqInfo{}
		ctx = context.WithValue(ctx, infoKey{}, info)
		ctx = withRequestID(ctx, RequestID(ctx))
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		sw.Header().Set("x-request-id", RequestID(ctx))
		defer func() {
			if p := recover(); p != nil {
				if sw.status == 0 {
					WriteError(sw, r, errs.Wrap(errs.Internal, fmt.Errorf("panic: %v", p), "internal error"))
				} else {
					info.err = fmt.Errorf("panic after the response began: %v", p)
				}
			}
			s.logLine(r, ep, sw.status, s.Now().Sub(start), usage, bill, info)
		}()
		if err := s.admit(sw, r, ep); err != nil {
			WriteError(sw, r, err)
			return
		}
		ep.Handler.ServeHTTP(sw, r)
	})
}

// admit runs the checks that come before any handler, in the order a
// client can act on them: method, size, media type, token, scope, rate.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, ep Endpoint) error {
	if ep.Method != "" && r.Method != ep.Method {
		w.Header().Set("Allow", ep.Method)
		return errs.E(errs.MethodNotAllowed, "%s %s is not allowed; use %s", r.Method, "/v1"+ep.Path, ep.Method)
	}
	limit := int64(MaxBody)
	if ep.MaxBody > 0 {
		limit = ep.MaxBody
	}
	if r.ContentLength > limit {
		if ep.MaxBody > 0 {
			return errs.E(errs.TooLarge, "request body is larger than %d bytes", limit)
		}
		return errTooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if ep.Method == http.MethodPost && r.ContentLength != 0 {
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil || (mt != "application/json" && !hasJSONSuffix(mt)) {
				return errs.E(errs.UnsupportedMedia, "Content-Type must be application/json, got %s", Quote(ct))
			}
		}
	}
	if ep.Public {
		return nil
	}
	token := r.Header.Get("x-api-token")
	var p Principal
	var err error
	if token == "" {
		err = errs.E(errs.Unauthorized, "the x-api-token header is required")
	} else {
		p, err = s.Auth.Authenticate(r.Context(), token)
	}
	if err != nil {
		// Only failures count, after the token was checked: a valid token
		// is never refused for what others sent from its address.
		if errs.Is(err, errs.Unauthorized) && s.AuthFailures != nil {
			if ok, wait := s.AuthFailures.Fail(r.Context(), ClientAddress(r)); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				return errs.E(errs.RateLimited, "too many failed authentications from this address; retry after %s", wait.Round(time.Millisecond))
			}
		}
		return err
	}
	infoOf(r.Context()).org = p.Org
	if err := p.Require(ep.Scope, ep.describe()); err != nil {
		return err
	}
	if s.Limiter != nil {
		if ok, wait := s.Limiter.Allow(r.Context(), p.Org); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			return errs.E(errs.RateLimited, "rate limit exceeded for organization %q; retry after %s", p.Org, wait.Round(time.Millisecond))
		}
	}
	return nil
}

// ClientAddress is the request's client IP address ("" when unknown): the
// host of RemoteAddr, which the Lambda adapter fills from the HTTP API's
// source IP.
func ClientAddress(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

func hasJSONSuffix(mt string) bool { return len(mt) > 5 && mt[len(mt)-5:] == "+json" }

func (s *Server) logLine(r *http.Request, ep Endpoint, status int, d time.Duration, u *billing.Usage, bill *billing.Bill, info *reqInfo) {
	calls, capacity := u.Snapshot()
	attrs := []slog.Attr{
		slog.String("request_id", RequestID(r.Context())),
		slog.String("org", info.org),
		slog.String("endpoint", ep.Name),
		slog.String("method", r.Method),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.Int("ddb_calls", calls),
		slog.Float64("ddb_capacity", capacity),
	}
	if t := bill.Total(); t.Calls > 0 { // only with DDB_BILL
		attrs = append(attrs, slog.Float64("ddb_billed_read", t.Read), slog.Float64("ddb_billed_write", t.Write+t.IndexWrite))
	}
	level := slog.LevelInfo
	if info.err != nil {
		attrs = append(attrs, slog.String("error", info.err.Error()))
		if status >= 500 {
			level = slog.LevelError
		}
	}
	s.Log.LogAttrs(r.Context(), level, "request", attrs...)
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// reqInfo carries what the log line learns during a request.
type reqInfo struct {
	org string
	err error
}

type infoKey struct{}

func infoOf(ctx context.Context) *reqInfo {
	i, _ := ctx.Value(infoKey{}).(*reqInfo)
	return i
}

// NoteError records err as the request's error for its log line, as
// WriteError does: for handlers that answer errors in a form of their own
// (the web app's pages).
func NoteError(ctx context.Context, err error) {
	if i := infoOf(ctx); i != nil {
		i.err = err
	}
}

// NoteOrg records the organization a request acted for, for its log line:
// for public endpoints that authenticate by other means (the web app's
// session).
func NoteOrg(ctx context.Context, org string) {
	if i := infoOf(ctx); i != nil {
		i.org = org
	}
}

// Org is the organization of the request's token ("" on public endpoints).
func Org(ctx context.Context) string {
	if i := infoOf(ctx); i != nil {
		return i.org
	}
	return ""
}

type requestIDKey struct{}

func withRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		id = NewRequestID()
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id of the request being served: API Gateway's own when
// deployed, a fresh one otherwise.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID returns a random request id.
func NewRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// OwnOrg checks that an organization slug named in a request body is the
// token's organization: any other is answered exactly as an absent one.
func OwnOrg(ctx context.Context, slug string) (string, error) {
	org := Org(ctx)
	if !strings.EqualFold(slug, org) {
		return "", errs.E(errs.NotFound, "organization %q not found", slug)
	}
	return org, nil
}
