package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// TestTakeTokensIsATokenBucket: the shared bucket gives its burst in
// blocks, refuses with the wait until a block is back, refills at its
// rate, gives what is left when less than a block is, and is full again
// after a pause; each lease is one write when the hint is right, two when
// another copy moved the bucket since.
func TestTakeTokensIsATokenBucket(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClock(t0)
	db, table := storetest.NewTable(t)
	s := store.New(db, table, clock.Now)
	b := store.Bucket{Rate: 100, Burst: 210}
	var fullAt time.Time // this copy's hint
	take := func(n, wantWrites int) store.Lease {
		t.Helper()
		ctx, usage := store.WithUsage(context.Background())
		l, err := s.TakeTokens(ctx, "acme", b, n, fullAt)
		if err != nil {
			t.Fatal(err)
		}
		if calls, _ := usage.Snapshot(); calls != wantWrites {
			t.Errorf("lease of %d: %d writes, want %d", n, calls, wantWrites)
		}
		fullAt = l.FullAt
		return l
	}
	for i := range 10 {
		if l := take(20, 1); l.Took != 20 {
			t.Fatalf("block %d: took %d, want 20", i, l.Took)
		}
	}
	if l := take(20, 1); l.Took != 10 {
		t.Fatalf("the burst's last 10: took %d", l.Took)
	}
	// Empty: refused without a write, until 20 tokens' time (200 ms).
	if l := take(20, 0); l.Took != 0 || l.Wait != 200*time.Millisecond {
		t.Fatalf("empty bucket: %+v, want 0 tokens and a 200ms wait", l)
	}
	clock.Advance(150 * time.Millisecond)
	if l := take(20, 1); l.Took != 15 {
		t.Fatalf("150 ms later: took %d, want the 15 refilled", l.Took)
	}
	// Another copy, whose hint says the bucket is full, learns otherwise
	// from its refused write and takes from the bucket as it is.
	clock.Advance(100 * time.Millisecond)
	if l, err := s.TakeTokens(context.Background(), "acme", b, 20, time.Time{}); err != nil || l.Took != 10 {
		t.Fatalf("a copy with no hint: %+v %v, want 10 tokens", l, err)
	}
	// This copy's hint is now stale the other way: the bucket holds no token.
	if l := take(20, 1); l.Took != 0 || l.Wait != 200*time.Millisecond {
		t.Fatalf("after the other copy: %+v", l)
	}
	// After a pause the bucket is full again: the first write assumes so.
	clock.Advance(time.Minute)
	if l := take(20, 1); l.Took != 20 {
		t.Fatalf("after a pause: took %d", l.Took)
	}
	// Another organization has its own bucket.
	if l, err := s.TakeTokens(context.Background(), "other", b, 20, time.Time{}); err != nil || l.Took != 20 {
		t.Fatalf("another organization: %+v %v", l, err)
	}

	// The item is one small item that expires once the bucket is full
	// again at the latest (2.1 s after the last lease).
	got, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "ORG#acme"}, "SK": &types.AttributeValueMemberS{Value: "RATE"}}})
	if err != nil {
		t.Fatal(err)
	}
	ttl, _ := got.Item[store.AttrTTL].(*types.AttributeValueMemberN)
	if want := clock.Now().Add(2100 * time.Millisecond).Unix(); ttl == nil || ttl.Value != strconv.FormatInt(want+1, 10) {
		t.Errorf("ttl %v, want %d", got.Item[store.AttrTTL], want+1)
	}
}
