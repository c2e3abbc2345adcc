package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/internal/testkit"
)

// pageCase is a page and the most DynamoDB calls its handler's comment
// allows for the data of pagesEnv (one repository, one queue).
type pageCase struct {
	name, path string
	max        int
}

// pagesEnv is the queue scene and the uploads, with a signed-in cookie
// and every page of them; the middleware's log lines (with each request's
// DynamoDB calls) go to the returned buffer.
func pagesEnv(tb testing.TB) (*env, scene, *http.Cookie, []pageCase, *testkit.SyncBuffer) {
	e := newEnv(tb)
	s := e.queueScene()
	e.uploadFlaky()
	logs := &testkit.SyncBuffer{}
	e.App.Server.Log = slog.New(slog.NewJSONHandler(logs, nil))
	c := e.client()
	e.signIn(c, "acme")
	u, _ := http.NewRequest(http.MethodGet, e.URL, nil)
	cookie := c.Jar.Cookies(u.URL)[0]
	id := e.testID("test_login")
	return e, s, cookie, []pageCase{
		{"org home", "/acme", 1 + 4},
		{"org home p2", "/acme?repos_after=github.com%2Facme%2Fa", 1 + 4},
		{"queue", "/acme/merge-queue/acme/web/main", 1},
		{"pull request", fmt.Sprintf("/acme/merge-queue/acme/web/main/pr/%d", s.retested), 1 + 1 + 1 + 10},
		{"test list", "/acme/flaky-tests?repo=acme/web", 1 + 3 + 9},
		{"test list p2", "/acme/flaky-tests?repo=acme/web&flaky_after=" + id, 1 + 1 + 3}, // the flaky index alone
		{"test", "/acme/flaky-tests/test/" + id + "?repo=acme%2Fweb", 1 + 1 + 2*4},
	}, logs
}

// serve renders one page through the service's handler, as the local
// server does (the Lambda adapter, the middleware).
func serve(tb testing.TB, e *env, cookie *http.Cookie, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(cookie)
	w := httptest.NewRecorder()
	e.Mux.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		tb.Fatalf("%s: %d %s", path, w.Code, w.Body)
	}
}

// lastCalls is the DynamoDB calls of the last request logged.
func lastCalls(tb testing.TB, logs *testkit.SyncBuffer) int {
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var l struct {
		Endpoint string `json:"endpoint"`
		Calls    int    `json:"ddb_calls"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &l); err != nil || l.Endpoint != "web" {
		tb.Fatalf("last log line %q: %v", lines[len(lines)-1], err)
	}
	return l.Calls
}

// pageCalls: each page makes no more DynamoDB calls than its handler's
// comment says (the session secret is read once per copy, by the first
// page). TestBrowserMergeQueue runs it first on its scene: making the
// scene is most of the cost of either.
func pageCalls(t *testing.T, e *env, cookie *http.Cookie, pages []pageCase, logs *testkit.SyncBuffer) {
	serve(t, e, cookie, "/acme") // reads the session secret
	for _, p := range pages {
		serve(t, e, cookie, p.path)
		got := lastCalls(t, logs)
		t.Logf("%-12s %2d DynamoDB calls (at most %d)", p.name, got, p.max)
		if got > p.max || got == 0 {
			t.Errorf("%s: %d DynamoDB calls, its handler allows %d", p.name, got, p.max)
		}
	}
}

// BenchmarkPages renders each page against DynamoDB Local, beside one
// bare GetItem of the same table, so the figures read as a multiple of a
// table call:
//
//	go run ./internal/withdynamo go test -run '^$' -bench Pages ./shared/web/
func BenchmarkPages(b *testing.B) {
	e, _, cookie, pages, logs := pagesEnv(b)
	serve(b, e, cookie, "/acme")
	b.Run("bare GetItem", func(b *testing.B) {
		in := &dynamodb.GetItemInput{TableName: aws.String(e.Table), Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "ORG#acme"}, "SK": &types.AttributeValueMemberS{Value: "ORG"},
		}}
		for b.Loop() {
			if _, err := e.DB.GetItem(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(1, "ddb_calls/op")
	})
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			calls := 0
			for b.Loop() {
				serve(b, e, cookie, p.path)
				calls = lastCalls(b, logs)
			}
			b.ReportMetric(float64(calls), "ddb_calls/op")
		})
	}
}
