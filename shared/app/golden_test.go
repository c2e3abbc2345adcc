package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/mainguard/mainguard/internal/testkit"
)

// golden is the part of a response a client sees and a golden file pins:
// status, content type, extra headers that carry meaning, and the body (as
// JSON when it is JSON, else as text).
type golden struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       any               `json:"body"`
}

// pinnedHeaders are compared; the request id is checked separately.
var pinnedHeaders = []string{"content-type", "allow", "retry-after"}

func toGolden(tb testing.TB, resp events.APIGatewayV2HTTPResponse) golden {
	tb.Helper()
	g := golden{StatusCode: resp.StatusCode, Headers: map[string]string{}, Body: resp.Body}
	for _, h := range pinnedHeaders {
		if v, ok := resp.Headers[h]; ok {
			g.Headers[h] = v
		}
	}
	if strings.HasPrefix(resp.Headers["content-type"], "application/json") {
		var v any
		if err := json.Unmarshal([]byte(resp.Body), &v); err != nil {
			tb.Fatalf("JSON response does not parse: %v\n%s", err, resp.Body)
		}
		g.Body = v
	}
	return g
}

// TestGolden calls each function with every request of testdata/<function>/
// and compares the response with the .response.json beside it.
func TestGolden(t *testing.T) {
	t.Parallel()
	reqs, _ := filepath.Glob("testdata/*/*.request.json")
	if len(reqs) == 0 {
		t.Fatal("no golden requests found")
	}
	h := newHarness(t, nil)
	h.seedQueues(t)
	for _, reqPath := range reqs {
		fn := filepath.Base(filepath.Dir(reqPath))
		name := fn + "/" + strings.TrimSuffix(filepath.Base(reqPath), ".request.json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(reqPath)
			if err != nil {
				t.Fatal(err)
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("%s: %v", reqPath, err)
			}
			resp := h.call(t, fn, ev)
			if got, want := resp.Headers["x-request-id"], ev.RequestContext.RequestID; got != want || got == "" {
				t.Errorf("x-request-id = %q, want the API Gateway request id %q", got, want)
			}
			got := toGolden(t, resp)
			respPath := strings.TrimSuffix(reqPath, ".request.json") + ".response.json"
			testkit.GoldenJSON(t, respPath, got)
		})
	}
}
