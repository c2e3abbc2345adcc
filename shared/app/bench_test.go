package app_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// countingDB counts the DynamoDB calls the service makes.
type countingDB struct {
	store.DB
	calls atomic.Int64
}

func (c *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.calls.Add(1)
	return c.DB.GetItem(ctx, in, o...)
}

func (c *countingDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.calls.Add(1)
	return c.DB.BatchGetItem(ctx, in, o...)
}

func (c *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.calls.Add(1)
	return c.DB.Query(ctx, in, o...)
}

// BenchmarkGetTestDetails measures get-test-details through the whole
// stack (adapter, middleware, auth, store, view) beside a bare GetItem of
// the same item in the same run, so the stack's overhead reads as a ratio.
// Both run against the same DynamoDB Local.
func BenchmarkGetTestDetails(b *testing.B) {
	h := newHarness(b, nil)
	ev := event("/flaky-tests/get-test-details", map[string]any{"repo": web, "org_url_slug": "acme", "test_id": testID})
	h.call(b, "get-test-details", ev) // warm the token cache, as a warm Lambda copy is

	b.Run("stack", func(b *testing.B) {
		counter := &countingDB{DB: storetest.Client(b)}
		h2 := newHarnessOn(b, h, counter)
		fn, _ := h2.app.Function("get-test-details")
		e := ev
		e.Headers = map[string]string{"content-type": "application/json", "x-api-token": h.tokens["{{TOKEN}}"]}
		if resp, _ := fn(context.Background(), e); resp.StatusCode != 200 { // warm its cache too
			b.Fatalf("%d %s", resp.StatusCode, resp.Body)
		}
		counter.calls.Store(0)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if resp, _ := fn(context.Background(), e); resp.StatusCode != 200 {
				b.Fatalf("%d %s", resp.StatusCode, resp.Body)
			}
		}
		b.ReportMetric(float64(counter.calls.Load())/float64(b.N), "ddb-calls/op")
	})
	b.Run("bare-getitem", func(b *testing.B) {
		db := storetest.Client(b)
		key := map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "ORG#acme#REPO#" + web.Key() + "#TEST#" + testID},
			"SK": &types.AttributeValueMemberS{Value: "TEST"},
		}
		in := &dynamodb.GetItemInput{TableName: aws.String(h.app.Config.TableName), Key: key, ConsistentRead: aws.Bool(true)}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			out, err := db.GetItem(context.Background(), in)
			if err != nil || out.Item == nil {
				b.Fatalf("bare GetItem: %v", err)
			}
		}
		b.ReportMetric(1, "ddb-calls/op")
	})
}

// BenchmarkGetTestDetailsHistory reads tests with 10 runs (in 10 hours),
// 1,000 and 100,000 runs (both over every hour of the last 7 days) in their
// history, in the same run. A read is one BatchGetItem of the aggregate,
// whose size follows the hours with runs in the window, never the number
// of runs: 1,000 and 100,000 should be equal within noise. Seeding the
// long history takes minutes on DynamoDB Local.
//
//	go test -run '^$' -bench GetTestDetailsHistory -benchtime 2000x -count 6 ./shared/app/
func BenchmarkGetTestDetailsHistory(b *testing.B) {
	h := newHarness(b, nil)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "api"}
	// seed records runs of test id in up to 1,021 uploads, one an hour
	// going back (cycling over the last 7 days), up to 98 runs each: a
	// transaction's worth.
	seed := func(id string, runs int) {
		uploads := min(runs, 1021)
		sem := make(chan struct{}, 4)
		errc := make(chan error, uploads)
		for u := range uploads {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				up := testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: fmt.Sprintf("seed-%s-%05d", id[:8], u),
					At: t0.Add(-time.Duration(u%168) * time.Hour), SHA: fmt.Sprintf("sha%05d", u), Branch: "main", Monitored: true}
				var rs []testhealth.Run
				for i := range runs / uploads {
					st := "passed"
					if (u*runs/uploads+i)%10 == 0 { // one run in ten fails
						st = "failed"
					}
					rs = append(rs, testhealth.Run{Seq: i, Status: st, Cluster: "c1", Summary: "boom"})
				}
				errc <- h.app.Store.RecordRuns(ctx, up, []testhealth.TestRuns{{Test: testhealth.TestCase{ID: id, Name: "t" + id[:4]}, Runs: rs}})
			}()
		}
		for range cap(sem) {
			sem <- struct{}{}
		}
		close(errc)
		for err := range errc {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	cases := []struct {
		name string
		id   string
		runs int
	}{
		{"runs=10", "00000000-0000-5000-8000-000000000010", 10},
		{"runs=1000", "00000000-0000-5000-8000-000000001000", 1000},
		{"runs=100000", "00000000-0000-5000-8000-000000100000", 100_000},
	}
	for _, c := range cases {
		seed(c.id, c.runs)
	}
	fn, _ := h.app.Function("get-test-details")
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := event("/flaky-tests/get-test-details", map[string]any{"repo": repo, "org_url_slug": "acme", "test_id": c.id})
			e.Headers["x-api-token"] = h.tokens["{{TOKEN}}"]
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if resp, _ := fn(ctx, e); resp.StatusCode != 200 {
					b.Fatalf("%d %s", resp.StatusCode, resp.Body)
				}
			}
		})
	}
}
