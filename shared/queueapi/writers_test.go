package queueapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

var mainQueue = store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, Branch: "main"}

// writerOp is one command a writer sent and whether it was acknowledged.
type writerOp struct {
	path string
	code int
	body string
}

// writers runs clients at once against the queue, each submitting and
// cancelling its own PR in turn, rounds times; it returns every answer of
// each client in order.
func (e *env) writers(prs []int, rounds int) [][]writerOp {
	ops := make([][]writerOp, len(prs))
	var wg sync.WaitGroup
	for i, n := range prs {
		wg.Go(func() {
			for r := range rounds {
				path := "submitPullRequest"
				if r%2 == 1 {
					path = "cancelPullRequest"
				}
				code, body := e.call(path, prq(n, nil))
				ops[i] = append(ops[i], writerOp{path, code, body})
			}
		})
	}
	wg.Wait()
	return ops
}

// TestOneQueueManyWriters: 30 clients submit and cancel their own PR on
// one queue at once, folded in the background as on the local server.
// No answer is a conflict (or anything but 200, and 404 for a cancel that
// found its PR already cancelled: never here, each client waits for its
// answer), and once the folds are done every PR is in the state of its
// last acknowledged command, with no command left pending.
func TestOneQueueManyWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	folds := &queuesvc.Background{Driver: e.App.MergeQueue.Driver, Ctx: context.Background()}
	e.App.MergeQueue.Driver.AfterRecord = folds.Notify
	e.ok("createQueue", q(map[string]any{"concurrency": 50}), nil)
	var prs []int
	for i := range 30 {
		prs = append(prs, e.openPR(fmt.Sprintf("w%02d", i)))
	}
	const rounds = 5 // submit, cancel, submit, cancel, submit
	ops := e.writers(prs, rounds)
	folds.Wait()

	for i, n := range prs {
		for _, op := range ops[i] {
			if op.code != http.StatusOK {
				t.Errorf("PR %d: %s answered %d %s", n, op.path, op.code, op.body)
			}
		}
		if got := e.pr(n).State; got == "CANCELLED" || got == "" {
			t.Errorf("PR %d is %s after its last command, a submit", n, got)
		}
	}
	_, cmds, err := e.App.Store.QueueWithCommands(context.Background(), mainQueue)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 0 {
		t.Errorf("%d commands still pending after the folds", len(cmds))
	}
	// Each PR went NOT_READY → CANCELLED → NOT_READY → CANCELLED →
	// NOT_READY (at least: the step moves it on), each command applied
	// once: two cancellations each.
	var got struct {
		PullRequests []struct {
			Number int    `json:"prNumber"`
			State  string `json:"state"`
		} `json:"enqueuedPullRequests"`
	}
	e.tick() // GitHub has computed their mergeability by the next read: they leave NOT_READY
	e.ok("getQueue", q(nil), &got)
	if len(got.PullRequests) != len(prs) {
		t.Errorf("getQueue shows %d enqueued PRs, want %d", len(got.PullRequests), len(prs))
	}
}

// TestCommandsAreSeenBeforeTheyAreFolded: with no fold after a command (a
// lost stream record, a process that died), its client reads it at once
// through the view; the stream function folds it, and so does the next
// tick when nothing else did.
func TestCommandsAreSeenBeforeTheyAreFolded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.App.MergeQueue.Driver.AfterRecord = nil
	e.ok("createQueue", q(nil), nil)
	a, b := e.openPR("a"), e.openPR("b")
	e.ok("submitPullRequest", prq(a, map[string]any{"priority": "high"}), nil)
	e.ok("submitPullRequest", prq(b, nil), nil)

	pending := func() []store.QueueCommand {
		t.Helper()
		_, cmds, err := e.App.Store.QueueWithCommands(context.Background(), mainQueue)
		if err != nil {
			t.Fatal(err)
		}
		return cmds
	}
	if n := len(pending()); n != 2 {
		t.Fatalf("%d commands pending, want 2", n)
	}
	if got := e.pr(a); got.State != "NOT_READY" || got.PriorityName != "high" {
		t.Errorf("PR %d before the fold: %s %s, want NOT_READY high", a, got.State, got.PriorityName)
	}
	// A cancel is checked against the queue as its pending commands leave
	// it: b is submitted there, and a PR never submitted is not.
	e.ok("cancelPullRequest", prq(b, nil), nil)
	if code, body := e.call("cancelPullRequest", prq(999, nil)); code != http.StatusNotFound {
		t.Errorf("cancel of a PR never submitted: %d %s", code, body)
	}
	if got := e.pr(b).State; got != "CANCELLED" {
		t.Errorf("PR %d after its pending cancel: %s", b, got)
	}

	// The stream function, as the table's stream would call it for the
	// first command: every pending command of that queue is folded.
	fn, ok := e.App.EventFunction("fold-queue-commands")
	if !ok {
		t.Fatal("no fold-queue-commands function")
	}
	fold, ok := fn.(func(context.Context, events.DynamoDBEvent) error)
	if !ok {
		t.Fatalf("fold-queue-commands handler is a %T", fn)
	}
	first := pending()[0]
	if err := fold(context.Background(), commandInsert(first.SK)); err != nil {
		t.Fatal(err)
	}
	if n := len(pending()); n != 0 {
		t.Errorf("%d commands pending after the stream's fold", n)
	}
	// a waits for GitHub's mergeability (null on the fold's first read of
	// it), which the next read has.
	if got := e.states(a, b); !slices.Equal(got, []string{"NOT_READY", "CANCELLED"}) {
		t.Errorf("states after the fold: %v, want [NOT_READY CANCELLED]", got)
	}
	e.tick()
	if got := e.states(a, b); !slices.Equal(got, []string{"TESTING", "CANCELLED"}) {
		t.Errorf("states a tick after the fold: %v, want [TESTING CANCELLED]", got)
	}

	// A command no fold reached: the tick folds it.
	e.ok("submitPullRequest", prq(b, nil), nil)
	if n := len(pending()); n != 1 {
		t.Fatalf("%d commands pending, want 1", n)
	}
	e.tick()
	if n := len(pending()); n != 0 {
		t.Errorf("%d commands pending after a tick", n)
	}
	if got := e.pr(b).State; got == "CANCELLED" {
		t.Errorf("PR %d still cancelled after the tick folded its submit", b)
	}
}

// commandInsert is the stream record of a command item's insert on the
// acme/web main queue, as DynamoDB Streams shows it (NEW_IMAGE).
func commandInsert(sk string) events.DynamoDBEvent {
	s := events.NewStringAttribute
	return events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventName: string(events.DynamoDBOperationTypeInsert),
		Change: events.DynamoDBStreamRecord{
			Keys: map[string]events.DynamoDBAttributeValue{store.AttrSK: s(sk)},
			NewImage: map[string]events.DynamoDBAttributeValue{
				store.AttrSK: s(sk), "org": s("acme"), "host": s("github.com"), "owner": s("acme"), "name": s("web"), "branch": s("main"),
			},
		},
	}}}
}

var writersFor = flag.Duration("writers.for", 60*time.Second, "how long BenchmarkOneQueueFiftyWriters runs its clients")

// BenchmarkOneQueueFiftyWriters: 50 clients submit and cancel their own
// PR on one queue over HTTP for -writers.for, folded in the background as
// on the local server, while one more client reads the queue (getQueue) in
// the same run. It reports the median and p99 of each call and the p99
// ratio of submit to getQueue (the goal: within 3), and fails on any
// answer but 200, or a PR not in the state of its last acknowledged
// command once the folds are done.
//
//	go test -run '^$' -bench OneQueueFiftyWriters -benchtime 1x ./shared/queueapi/
func BenchmarkOneQueueFiftyWriters(b *testing.B) {
	for range b.N {
		e := newEnv(b, nil)
		folds := &queuesvc.Background{Driver: e.App.MergeQueue.Driver, Ctx: context.Background()}
		e.App.MergeQueue.Driver.AfterRecord = folds.Notify
		srv := httptest.NewServer(e.Mux)
		e.ok("createQueue", q(map[string]any{"concurrency": 50}), nil)
		var prs []int
		for i := range 50 {
			prs = append(prs, e.openPR(fmt.Sprintf("w%02d", i)))
		}
		post := func(path string, body any) (int, time.Duration) {
			raw, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/"+path, bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("x-api-token", e.Tokens["acme"])
			start := time.Now()
			resp, err := srv.Client().Do(req)
			took := time.Since(start)
			if err != nil {
				return 0, took
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode, took
		}
		var (
			mu    sync.Mutex
			took  = map[string][]time.Duration{}
			other []string
		)
		note := func(path string, code int, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			took[path] = append(took[path], d)
			if code != http.StatusOK {
				other = append(other, fmt.Sprintf("%s %d", path, code))
			}
		}
		last := make([]string, len(prs))
		stop := time.Now().Add(*writersFor)
		var wg sync.WaitGroup
		b.ResetTimer()
		for i, n := range prs {
			wg.Go(func() {
				for r := 0; time.Now().Before(stop); r++ {
					path := "submitPullRequest"
					if r%2 == 1 {
						path = "cancelPullRequest"
					}
					code, d := post(path, prq(n, nil))
					note(path, code, d)
					if code == http.StatusOK {
						last[i] = path
					}
				}
			})
		}
		wg.Go(func() {
			for time.Now().Before(stop) {
				code, d := post("getQueue", q(nil))
				note("getQueue", code, d)
			}
		})
		// A bare PutItem of an unrelated item, as often as one client
		// can: what a write costs DynamoDB Local under the same load.
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				start := time.Now()
				_, err := e.DB.PutItem(context.Background(), &dynamodb.PutItemInput{
					TableName: aws.String(e.Table),
					Item: map[string]types.AttributeValue{
						store.AttrPK: &types.AttributeValueMemberS{Value: fmt.Sprintf("BENCH#%d", i)},
						store.AttrSK: &types.AttributeValueMemberS{Value: "PUT"},
					},
				})
				code := http.StatusOK
				if err != nil {
					code = 0
				}
				note("putItem", code, time.Since(start))
			}
		})
		wg.Wait()
		b.StopTimer()
		folds.Wait()
		srv.Close()

		if len(other) > 0 {
			b.Errorf("%d answers not 200, e.g. %v", len(other), other[:min(5, len(other))])
		}
		for i, n := range prs {
			cancelled := e.pr(n).State == "CANCELLED"
			if cancelled != (last[i] == "cancelPullRequest") {
				b.Errorf("PR %d is %s after its last acknowledged %s", n, e.pr(n).State, last[i])
			}
		}
		pct := func(path string, p float64) time.Duration {
			ds := slices.Clone(took[path])
			slices.Sort(ds)
			if len(ds) == 0 {
				return 0
			}
			return ds[min(len(ds)-1, int(p*float64(len(ds))))]
		}
		for _, path := range []string{"submitPullRequest", "cancelPullRequest", "getQueue", "putItem"} {
			short := strings.TrimSuffix(path, "PullRequest")
			b.ReportMetric(float64(len(took[path])), short+"_calls")
			b.ReportMetric(float64(pct(path, 0.5).Microseconds())/1000, short+"_p50_ms")
			b.ReportMetric(float64(pct(path, 0.99).Microseconds())/1000, short+"_p99_ms")
		}
		b.ReportMetric(float64(pct("submitPullRequest", 0.99))/float64(pct("getQueue", 0.99)), "submit/getQueue_p99")
	}
}
