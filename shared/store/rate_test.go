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
// blocks, refuses (without a write) with the wait until a block is back,
// refills at its rate, and is full again after a pause; each lease is one
// write when the copy's hint is right, two when another copy moved the
// bucket since.
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
		if l := take(20, 1); !l.Taken {
			t.Fatalf("block %d of the burst refused", i)
		}
	}
	// 10 tokens left, less than a block: refused without a write, until
	// 10 more are in (100 ms).
	if l := take(20, 0); l.Taken || l.Wait != 100*time.Millisecond {
		t.Fatalf("10 tokens left: %+v, want refused for 100ms", l)
	}
	clock.Advance(100 * time.Millisecond)
	if l := take(20, 1); !l.Taken {
		t.Fatal("100 ms later: refused")
	}
	// Another copy, whose hint says the bucket is full, learns otherwise
	// from its refused write and takes from the bucket as it is.
	clock.Advance(200 * time.Millisecond)
	ctx, usage := store.WithUsage(context.Background())
	if l, err := s.TakeTokens(ctx, "acme", b, 20, time.Time{}); err != nil || !l.Taken {
		t.Fatalf("a copy with no hint: %+v %v", l, err)
	}
	if calls, _ := usage.Snapshot(); calls != 2 {
		t.Errorf("a copy with no hint: %d writes, want 2", calls)
	}
	// This copy's hint is now stale the other way: it says 20 tokens are
	// free, the refused write says none are.
	if l := take(20, 1); l.Taken || l.Wait != 200*time.Millisecond {
		t.Fatalf("after the other copy: %+v, want refused for 200ms", l)
	}
	// After a pause the bucket is full again: the first write assumes so.
	clock.Advance(time.Minute)
	if l := take(20, 1); !l.Taken {
		t.Fatal("after a pause: refused")
	}
	// Another organization has its own bucket.
	if l, err := s.TakeTokens(context.Background(), "other", b, 20, time.Time{}); err != nil || !l.Taken {
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
