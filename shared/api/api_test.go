package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/errs"
)

type staticAuth map[string]string

func (a staticAuth) Authenticate(_ context.Context, token string) (string, error) {
	if org, ok := a[token]; ok {
		return org, nil
	}
	return "", errs.E(errs.Unauthorized, "the API token is not valid")
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
