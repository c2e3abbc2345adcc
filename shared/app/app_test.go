package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

var web = repository.Ref{Host: "github.com", Owner: "Acme", Name: "web"}

func details(tb testing.TB, h *harness) healthview.TestCase {
	tb.Helper()
	resp := h.call(tb, "get-test-details", event("/flaky-tests/get-test-details", map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID}))
	if resp.StatusCode != 200 {
		tb.Fatalf("get-test-details: %d %s", resp.StatusCode, resp.Body)
	}
	var out struct{ Test healthview.TestCase }
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil {
		tb.Fatal(err)
	}
	return out.Test
}

func TestLinkTicketShowsOnTheTestAndQueuesTheEvent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	link := func(key string) {
		t.Helper()
		resp := h.call(t, "link-ticket-to-test-case", event("/flaky-tests/link-ticket-to-test-case",
			map[string]any{"test_case_id": testID, "external_ticket_id": key, "repo": web}))
		if resp.StatusCode != 200 || resp.Body != "{}" {
			t.Fatalf("link %s: %d %s", key, resp.StatusCode, resp.Body)
		}
	}
	if tc := details(t, h); tc.Ticket != nil {
		t.Fatalf("ticket before linking: %+v", tc.Ticket)
	}
	link("KAN-1")
	h.Advance(time.Minute)
	link("KAN-2") // linking again replaces the link
	tc := details(t, h)
	if tc.Ticket == nil || tc.Ticket.HTMLURL != "https://acme.atlassian.net/browse/KAN-2" {
		t.Fatalf("ticket after relinking: %+v", tc.Ticket)
	}
	evs, err := h.app.Store.PendingEvents(context.Background(), "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("outbox holds %d events, want 2", len(evs))
	}
	var ev healthview.TicketLinked
	if err := json.Unmarshal([]byte(evs[1].Payload), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "test_case.ticket_linked" || ev.Ticket.ID != "KAN-2" || ev.TestCase.ID != testID ||
		ev.TestCase.Ticket == nil || ev.TestCase.Ticket.HTMLURL != ev.Ticket.HTMLURL || ev.Timestamp != "2026-07-23T01:33:50.000Z" {
		t.Errorf("event: %+v", ev)
	}
	if evs[0].ID == evs[1].ID {
		t.Errorf("events share id %s", evs[0].ID)
	}
	// The other tenant's copy of the test is untouched.
	other, err := h.app.Store.GetTestCase(context.Background(), "other", repository.Ref{Host: "github.com", Owner: "other", Name: "web"}, testID)
	if err != nil || other.Ticket != nil {
		t.Errorf("other tenant's test: %+v %v", other.Ticket, err)
	}
}

func TestRevokedTokenStopsWithinTheCacheTTL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	secret, _, err := h.app.Store.CreateToken(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	h.tokens["{{FRESH}}"] = secret
	ev := event("/flaky-tests/get-test-details", map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID})
	ev.Headers["x-api-token"] = "{{FRESH}}"
	if got := h.call(t, "get-test-details", ev).StatusCode; got != 200 {
		t.Fatalf("fresh token: %d", got)
	}
	if _, err := h.app.Store.RevokeToken(ctx, "acme", secret); err != nil {
		t.Fatal(err)
	}
	ev.Headers["x-api-token"] = "{{FRESH}}"
	h.Advance(h.app.Config.AuthCacheTTL + time.Second)
	if got := h.call(t, "get-test-details", ev); got.StatusCode != 401 || got.Headers["content-type"] != api.ErrorContentType {
		t.Fatalf("revoked token after the cache TTL: %d %s", got.StatusCode, got.Body)
	}
}

func TestRateLimitAnswers429WithRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.RateLimit, c.RateBurst = 1, 2 })
	ev := func() map[string]any { return map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID} }
	codes := []int{}
	for range 3 {
		codes = append(codes, h.call(t, "get-test-details", event("/flaky-tests/get-test-details", ev())).StatusCode)
	}
	if fmt.Sprint(codes) != "[200 200 429]" {
		t.Fatalf("statuses %v, want [200 200 429]", codes)
	}
	resp := h.call(t, "get-test-details", event("/flaky-tests/get-test-details", ev()))
	if resp.Headers["retry-after"] != "1" {
		t.Errorf("retry-after = %q", resp.Headers["retry-after"])
	}
	// The other tenant has its own bucket.
	oev := event("/flaky-tests/get-test-details", map[string]any{"repo": repository.Ref{Host: "github.com", Owner: "other", Name: "web"}, "org_url_slug": "other", "test_id": testID})
	oev.Headers["x-api-token"] = "{{TOKEN}}_OTHER"
	if got := h.call(t, "get-test-details", oev).StatusCode; got != 200 {
		t.Errorf("other tenant limited by acme's traffic: %d", got)
	}
	h.Advance(time.Second)
	if got := h.call(t, "get-test-details", event("/flaky-tests/get-test-details", ev())).StatusCode; got != 200 {
		t.Errorf("after a second: %d", got)
	}
}

func TestStatusIsImpactedWithoutTheTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	cfg := h.app.Config
	cfg.TableName = "no_such_table"
	a, err := app.New(context.Background(), cfg, app.Options{DB: storetest.Client(t), Log: h.app.Log})
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := a.Function("status")
	ev := event("/status", nil)
	ev.RequestContext.HTTP.Method = "GET"
	resp, _ := fn(context.Background(), ev)
	if resp.StatusCode != 503 || resp.Body != `{"overallStatus":{"type":"impacted"}}` {
		t.Errorf("status without table: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestLogLineCountsDynamoDBCalls checks the one JSON line per request: a
// warm get-test-details costs exactly one DynamoDB call.
func TestLogLineCountsDynamoDBCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	body := map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID}
	h.call(t, "get-test-details", event("/flaky-tests/get-test-details", body)) // token read and cached
	before := strings.Count(h.logs.String(), "\n")
	h.call(t, "get-test-details", event("/flaky-tests/get-test-details", body))
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	if len(lines) != before+1 {
		t.Fatalf("%d log lines for one request", len(lines)-before)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["org"] != "acme" || rec["endpoint"] != "get-test-details" || rec["status"] != 200.0 ||
		rec["ddb_calls"] != 1.0 || rec["ddb_capacity"].(float64) <= 0 || rec["request_id"] != "req-test" {
		t.Errorf("log line: %v", rec)
	}
	if _, ok := rec["duration_ms"].(float64); !ok {
		t.Errorf("no duration: %v", rec)
	}
	if _, billed := rec["ddb_billed_read"]; billed {
		t.Errorf("billed without DDB_BILL: %v", rec)
	}
}

// TestLogLineBillsDynamoDBCalls: with DDB_BILL, a request's line carries
// what its calls cost by AWS's rules: get-test-details reads the repository
// and the test's three items in one eventually consistent BatchGetItem,
// half a unit each; a ticket
// link writes the test and its event in a transaction, twice each.
func TestLogLineBillsDynamoDBCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *config.Config) { c.BillDynamo = true })
	last := func() map[string]any { return h.lastLog(t) }
	body := map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID}
	h.call(t, "get-test-details", event("/flaky-tests/get-test-details", body)) // token read and cached
	h.call(t, "get-test-details", event("/flaky-tests/get-test-details", body))
	if rec := last(); rec["ddb_billed_read"] != 2.0 || rec["ddb_billed_write"] != 0.0 {
		t.Errorf("get-test-details billed %v read, %v write; want 2 and 0", rec["ddb_billed_read"], rec["ddb_billed_write"])
	}
	if resp := h.call(t, "link-ticket-to-test-case", event("/flaky-tests/link-ticket-to-test-case", map[string]any{
		"repo": web, "test_case_id": testID, "external_ticket_id": "KAN-7"})); resp.StatusCode != 200 {
		t.Fatalf("link: %d %s", resp.StatusCode, resp.Body)
	}
	if rec := last(); rec["ddb_billed_write"].(float64) < 4 {
		t.Errorf("a link billed %v write units, want at least 4 (two items, twice each)", rec["ddb_billed_write"])
	}
}

// TestLocalServerRefusesLargeBodiesUnread sends 64 MiB to the
// local server, declared and chunked, and checks the 413 comes without the
// server reading more than the limit and one byte of the body.
func TestLocalServerRefusesLargeBodiesUnread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	var served atomic.Int64 // bytes the service read from request bodies
	mux := h.app.Mux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = readCounter{r.Body, &served}
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, chunked := range []bool{false, true} {
		served.Store(0)
		body := &countingReader{size: 64 << 20}
		req, _ := http.NewRequest("POST", srv.URL+"/v1/flaky-tests/get-test-details", body)
		req.Header.Set("x-api-token", h.tokens["{{TOKEN}}"])
		if !chunked {
			req.ContentLength = body.size
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// The server may answer and close while the client still sends;
			// what it read is checked below either way.
			t.Logf("chunked=%v: %v", chunked, err)
		} else {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || resp.Header.Get("Content-Type") != api.ErrorContentType || resp.Header.Get("x-request-id") == "" {
				t.Errorf("chunked=%v: %d %q %s", chunked, resp.StatusCode, resp.Header.Get("Content-Type"), msg)
			}
		}
		limit := int64(api.MaxBody + 1)
		if !chunked {
			limit = 0 // a declared length over the limit is refused unread
		}
		if got := served.Load(); got > limit {
			t.Errorf("chunked=%v: the service read %d bytes of a 64 MiB body, limit %d", chunked, got, limit)
		}
	}
}

type readCounter struct {
	io.ReadCloser
	n *atomic.Int64
}

func (r readCounter) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	return n, err
}

// countingReader is a body of spaces that counts what the client sent; the
// client's transport reads it on its own goroutine.
type countingReader struct {
	size int64
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	left := c.size - c.read.Load()
	if left == 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), left)
	for i := range p[:n] {
		p[i] = ' '
	}
	c.read.Add(n)
	return int(n), nil
}

// TestLocalServerServesEveryEndpoint checks the one listener routes /v1
// paths to their functions and answers unknown ones with a plain 404.
func TestLocalServerServesEveryEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	srv := httptest.NewServer(h.app.Mux())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != `{"overallStatus":{"type":"up"}}` {
		t.Errorf("status: %d %s", resp.StatusCode, b)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/v1/flaky-tests/get-test-details",
		strings.NewReader(fmt.Sprintf(`{"repo":{"host":"github.com","owner":"Acme","name":"web"},"org_url_slug":"acme","test_id":%q}`, testID)))
	req.Header.Set("x-api-token", h.tokens["{{TOKEN}}"])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"example_name"`) {
		t.Errorf("get-test-details: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Get(srv.URL + "/v1/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != api.ErrorContentType || resp.Header.Get("x-request-id") == "" {
		t.Errorf("unknown path: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestStoreOutageAnswers503WithRetryAfter: with the store unreachable, an
// endpoint answers 503 with Retry-After, not 500.
func TestStoreOutageAnswers503WithRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	a, err := app.New(context.Background(), h.app.Config, app.Options{DB: storetest.NewClient("http://" + addr), Log: h.app.Log})
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := a.Function("get-test-details")
	ev := event("/flaky-tests/get-test-details", map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID})
	ev.Headers["x-api-token"] = h.tokens["{{TOKEN}}"]
	resp, _ := fn(context.Background(), ev)
	if resp.StatusCode != 503 || resp.Headers["retry-after"] != "5" {
		t.Errorf("store gone: %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
	}
}

// TestUnknownTokenIsRememberedBriefly: a bad token repeated costs no read
// of the table while it is remembered as unknown (api.UnknownTTL).
func TestUnknownTokenIsRememberedBriefly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	body := map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID}
	calls := func() float64 {
		t.Helper()
		ev := event("/flaky-tests/get-test-details", body)
		ev.Headers["x-api-token"] = "mg_not_a_token"
		if resp := h.call(t, "get-test-details", ev); resp.StatusCode != 401 {
			t.Fatalf("bad token: %d", resp.StatusCode)
		}
		lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
			t.Fatal(err)
		}
		n, _ := rec["ddb_calls"].(float64)
		return n
	}
	if n := calls(); n != 1 {
		t.Errorf("first try of a bad token: %v calls, want 1", n)
	}
	if n := calls(); n != 0 {
		t.Errorf("second try: %v calls, want 0", n)
	}
	h.Advance(api.UnknownTTL + time.Second)
	if n := calls(); n != 1 {
		t.Errorf("after %v: %v calls, want 1", api.UnknownTTL, n)
	}
}

// TestBodyLimitIsLambdas: the local server takes what a deployed function
// can receive and no more, counted as API Gateway's event carries the body:
// 6 MB + 1 byte is 413 with the one sentence, MaxBody of plain JSON text is
// read, JSON with quotes counts them twice, and a body of another media type
// counts base64's four bytes for three.
func TestBodyLimitIsLambdas(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	srv := httptest.NewServer(h.app.Mux())
	defer srv.Close()
	post := func(body []byte, contentType string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/flaky-tests/get-test-details", bytes.NewReader(body))
		req.Header.Set("x-api-token", h.tokens["{{TOKEN}}"])
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg)
	}
	spaces := func(n int) []byte { return bytes.Repeat([]byte(" "), n) }
	const sentence = "request body is larger than a deployed function can receive: 6225920 bytes as API Gateway passes it on"
	for _, c := range []struct {
		name        string
		body        []byte
		contentType string
		want        int
	}{
		{"6 MB + 1 byte", spaces(6<<20 + 1), "application/json", 413},
		{"MaxBody + 1", spaces(api.MaxBody + 1), "application/json", 413},
		{"MaxBody", spaces(api.MaxBody), "application/json", 400}, // read: not a JSON object
		{"quotes count twice", append(append([]byte(`"`), bytes.Repeat([]byte(`\"`), api.MaxBody/4)...), '"'), "application/json", 413},
		{"binary over MaxBinaryBody", spaces(api.MaxBinaryBody + 1), "application/octet-stream", 413},
		{"binary of MaxBinaryBody", spaces(api.MaxBinaryBody), "application/octet-stream", 415},
	} {
		code, msg := post(c.body, c.contentType)
		if code != c.want || (c.want == 413 && !strings.Contains(msg, sentence)) {
			t.Errorf("%s: %d %.200s, want %d", c.name, code, msg, c.want)
		}
	}
}
