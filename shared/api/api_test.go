package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/errs"
)

// staticAuth maps tokens to organizations, each token with every right
// but "scope:S1,S2" tokens, which have the scopes they name.
type staticAuth map[string]string

func (a staticAuth) Authenticate(_ context.Context, token string) (Principal, error) {
	org, ok := a[token]
	if !ok {
		return Principal{}, errs.E(errs.Unauthorized, "the API token is not valid")
	}
	p := Principal{Org: org}
	if scopes, ok := strings.CutPrefix(token, "scope:"); ok {
		p.Scopes = strings.Split(scopes, ",")
	}
	return p, nil
}

func serverFor(h http.Handler, public bool) (LambdaHandler, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	s := &Server{Auth: staticAuth{"good": "acme"}, Log: slog.New(slog.NewJSONHandler(logs, nil)), Now: time.Now}
	return Lambda(s.Wrap(Endpoint{Name: "t", Method: "POST", Path: "/t", Public: public, Handler: h})), logs
}

func post(body string, b64 bool) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		RawPath: "/v1/t", Body: body, IsBase64Encoded: b64,
		Headers:        map[string]string{"x-api-token": "good"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: "rid-1", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST"}},
	}
}

func TestPanicBecomesA500WithoutDetail(t *testing.T) {
	fn, logs := serverFor(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret table name t_123") }), false)
	resp, err := fn(context.Background(), post("{}", false))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 || resp.Body != "internal error (request id rid-1)" || resp.Headers["content-type"] != ErrorContentType {
		t.Errorf("got %d %q %v", resp.StatusCode, resp.Body, resp.Headers)
	}
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log: %v %s", err, logs)
	}
	if line["level"] != "ERROR" || !strings.Contains(line["error"].(string), "secret table name") || line["org"] != "acme" {
		t.Errorf("the cause must be logged once, in full: %v", line)
	}
}

func TestUnknownErrorsNeverLeak(t *testing.T) {
	fn, _ := serverFor(JSON(func(r *http.Request, req *struct{}) (any, error) {
		return nil, io.ErrUnexpectedEOF // not a domain error
	}), false)
	resp, _ := fn(context.Background(), post("{}", false))
	if resp.StatusCode != 500 || strings.Contains(resp.Body, "EOF") {
		t.Errorf("got %d %q", resp.StatusCode, resp.Body)
	}
}

func TestAdapterBodiesAndHeaders(t *testing.T) {
	var seen string
	fn, _ := serverFor(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = string(b)
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte{0xff, 0x00, 0xfe})
	}), true)
	resp, _ := fn(context.Background(), post(base64.StdEncoding.EncodeToString([]byte(`{"x":1}`)), true))
	if seen != `{"x":1}` {
		t.Errorf("base64 body decoded as %q", seen)
	}
	if !resp.IsBase64Encoded || resp.Body != base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 0xfe}) {
		t.Errorf("binary response: %+v", resp)
	}
	if len(resp.Cookies) != 1 || resp.Cookies[0] != "a=1" || resp.Headers["x-request-id"] != "rid-1" {
		t.Errorf("cookies %v headers %v", resp.Cookies, resp.Headers)
	}
	resp, _ = fn(context.Background(), post("%%%", true))
	if resp.StatusCode != 400 || !strings.Contains(resp.Body, "base64") {
		t.Errorf("bad base64: %d %q", resp.StatusCode, resp.Body)
	}
}

func TestRateLimiterRefills(t *testing.T) {
	now := time.Unix(0, 0)
	l := &RateLimiter{Rate: 2, Burst: 1, Now: func() time.Time { return now }}
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("first request refused")
	}
	ok, wait := l.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("second: %v %v", ok, wait)
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Error("refilled request refused")
	}
}

// TestScopesDecideWhatATokenReaches: a token reaches an endpoint when it
// holds the endpoint's scope or admin, or was made before scopes (no
// scopes at all); else 403 with a sentence naming the scope missing, the
// endpoint and the token's scopes, and the handler never runs.
func TestScopesDecideWhatATokenReaches(t *testing.T) {
	ran := 0
	s := &Server{Auth: staticAuth{"scope:upload": "acme", "scope:read,queue": "acme", "scope:admin": "acme", "legacy": "acme"},
		Log: slog.New(slog.DiscardHandler), Now: time.Now}
	h := Lambda(s.Wrap(Endpoint{Name: "t", Method: "POST", Path: "/submitPullRequest", Scope: ScopeQueue, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran++ })}))
	for token, want := range map[string]int{"scope:upload": 403, "scope:read,queue": 200, "scope:admin": 200, "legacy": 200} {
		ev := post("{}", false)
		ev.Headers["x-api-token"] = token
		resp, _ := h(context.Background(), ev)
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", token, resp.StatusCode, want)
		}
		if want == 403 && resp.Body != "POST /v1/submitPullRequest needs the queue scope, which this token lacks (its scopes: upload); a token with it is made by mainguard token create --scope queue" {
			t.Errorf("%s: %q", token, resp.Body)
		}
	}
	if ran != 3 {
		t.Errorf("the handler ran %d times, want 3", ran)
	}
}

func TestParseScopes(t *testing.T) {
	got, err := ParseScopes([]string{"read, queue", "READ", "upload"})
	if err != nil || strings.Join(got, ",") != "queue,read,upload" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := ParseScopes([]string{"read,write"}); err == nil || errs.MessageOf(err) != `"write" is not a scope: give upload, read, queue or admin` {
		t.Errorf("unknown scope: %v", err)
	}
}

// TestRateLimiterPrunes: past maxBuckets keys, the buckets that are full
// again go, and a bucket still spending is kept.
func TestRateLimiterPrunes(t *testing.T) {
	now := time.Unix(0, 0)
	l := &RateLimiter{Rate: 1, Burst: 2, Now: func() time.Time { return now }}
	l.Allow("busy")
	l.Allow("busy")
	for i := range maxBuckets - 1 {
		l.Allow(strconv.Itoa(i))
	}
	now = now.Add(time.Second) // the others are full again; busy holds 1
	l.Allow("one more")
	if n := len(l.buckets); n != 2 {
		t.Errorf("%d buckets after pruning, want busy and the new one", n)
	}
	if ok, _ := l.Allow("busy"); !ok {
		t.Fatal("busy refilled one token")
	}
	if ok, _ := l.Allow("busy"); ok {
		t.Error("busy's bucket was forgotten: it holds no second token")
	}
}
