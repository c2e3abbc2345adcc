package app_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
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
