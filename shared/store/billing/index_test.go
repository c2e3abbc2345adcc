package billing_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/store/billing"
)

// Examples of "Provisioned throughput considerations for Global Secondary
// Indexes", on the page's GameScores table and its GameTitleIndex:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations

func gameScores(p billing.Projection) billing.Table {
	return billing.Table{PK: "UserId", SK: "GameTitle", Indexes: []billing.Index{
		{Name: "GameTitleIndex", PK: "GameTitle", SK: "TopScore", Projection: p},
	}}
}

func score(user, top string, more ...string) item {
	it := item{"UserId": s(user), "GameTitle": s("Comet Quest")}
	if top != "" {
		it["TopScore"] = n(top)
	}
	for i := 0; i+1 < len(more); i += 2 {
		it[more[i]] = n(more[i+1])
	}
	return it
}

func TestGSIThroughput_QueryOf8ItemsOf2000BytesIs2Units(t *testing.T) {
	c := billing.Call{Kind: billing.Query, Index: "GameTitleIndex", Consistent: true,
		Read: sized(2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000)}
	// Asked consistent, billed eventually consistent: a GSI has no other kind.
	if r, _ := billing.Units(c, gameScores(billing.KeysOnly)); r != 2 {
		t.Errorf("read = %g, want 2", r)
	}
}

func TestGSIThroughput_IndexWrites(t *testing.T) {
	for _, c := range []struct {
		name          string
		p             billing.Projection
		before, after item
		want          float64
	}{
		{"new item with the indexed attribute: one put", billing.KeysOnly,
			nil, score("123", "0"), 1},
		{"new item without it (user 400): no index write", billing.KeysOnly,
			nil, score("400", ""), 0},
		{"update that defines the indexed attribute: one put", billing.KeysOnly,
			score("400", ""), score("400", "10"), 1},
		{"indexed key changed from A to B: delete and put", billing.KeysOnly,
			score("123", "0"), score("123", "10"), 2},
		{"indexed attribute deleted: one delete", billing.KeysOnly,
			score("123", "0"), score("123", ""), 1},
		{"deleted item that was in the index: one delete", billing.KeysOnly,
			score("123", "0"), nil, 1},
		{"not in the index before or after: nothing", billing.KeysOnly,
			score("400", "", "Wins", "1"), score("400", "", "Wins", "2"), 0},
		{"projected attribute changed, keys not: one write", billing.Include("Wins"),
			score("123", "0", "Wins", "1"), score("123", "0", "Wins", "2"), 1},
		{"attribute outside the projection changed: nothing", billing.Include("Wins"),
			score("123", "0", "Losses", "1"), score("123", "0", "Losses", "2"), 0},
		{"All projects every attribute", billing.All,
			score("123", "0", "Losses", "1"), score("123", "0", "Losses", "2"), 1},
		{"identical overwrite: nothing", billing.All,
			score("123", "0"), score("123", "0"), 0},
		{"same number spelled differently: nothing", billing.All,
			score("123", "0", "Wins", "1"), score("123", "0.0", "Wins", "1.0"), 0},
	} {
		if got := gameScores(c.p).IndexWriteUnits(c.before, c.after); got != c.want {
			t.Errorf("%s: %g index units, want %g", c.name, got, c.want)
		}
	}
}

// "Larger index entries require additional write capacity units": an entry
// is sized on what the index holds, not on the table item.
func TestGSIThroughput_EntrySizeIsKeysPlusProjection(t *testing.T) {
	big := score("123", "0")
	big["Bio"] = s(strings.Repeat("x", 1500))
	if got := gameScores(billing.KeysOnly).IndexWriteUnits(nil, big); got != 1 {
		t.Errorf("keys only: %g, want 1 (the 1500-byte Bio is not in the entry)", got)
	}
	if got := gameScores(billing.All).IndexWriteUnits(nil, big); got != 2 {
		t.Errorf("all: %g, want 2", got)
	}
	// A key move of a large entry: each half is rounded on its own.
	moved := score("123", "10")
	moved["Bio"] = big["Bio"]
	if got := gameScores(billing.All).IndexWriteUnits(big, moved); got != 4 {
		t.Errorf("key move: %g, want 4", got)
	}
}

func TestSetOrderChangesNoIndexEntry(t *testing.T) {
	a, b := score("123", "0"), score("123", "0")
	a["Tags"] = &types.AttributeValueMemberSS{Value: []string{"x", "y"}}
	b["Tags"] = &types.AttributeValueMemberSS{Value: []string{"y", "x"}}
	if got := gameScores(billing.All).IndexWriteUnits(a, b); got != 0 {
		t.Errorf("%g index units, want 0", got)
	}
}

func TestUnits_PutBillsTableAndIndexes(t *testing.T) {
	c := billing.Call{Kind: billing.Put, Writes: []billing.Write{{After: billing.Of(score("123", "0"))}}}
	if r, w := billing.Units(c, gameScores(billing.All)); r != 0 || w != 2 {
		t.Errorf("Units = %g, %g; want 0, 2 (table 1 + index 1)", r, w)
	}
	// Index updates follow a transaction's commit once: not doubled.
	c.Kind = billing.TransactWrite
	if _, w := billing.Units(c, gameScores(billing.All)); w != 3 {
		t.Errorf("transactional write = %g, want 3 (table 2 + index 1)", w)
	}
	// A failed condition changes nothing, so no index is written.
	c.Kind, c.Writes[0].Failed = billing.Put, true
	if _, w := billing.Units(c, gameScores(billing.All)); w != 1 {
		t.Errorf("failed write = %g, want 1", w)
	}
	// An update whose old item is known only by size: its entry cannot be
	// told, so the new entry is billed as a put.
	c.Writes[0] = billing.Write{Before: billing.Sized(40), After: billing.Of(score("123", "0"))}
	if _, w := billing.Units(c, gameScores(billing.All)); w != 2 {
		t.Errorf("sized before-image = %g, want 2", w)
	}
}

// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/LSI.html#LSI.ThroughputConsiderations
func TestLSIThroughput_QueryMayBeStronglyConsistent(t *testing.T) {
	tb := billing.Table{PK: "PK", SK: "SK", Indexes: []billing.Index{{Name: "L", PK: "PK", SK: "At", Local: true}}}
	if r, _ := billing.Units(billing.Call{Kind: billing.Query, Index: "L", Consistent: true, Read: sized(kb)}, tb); r != 1 {
		t.Errorf("read = %g, want 1", r)
	}
	if got := tb.IndexWriteUnits(nil, item{"PK": s("a"), "SK": s("b"), "At": n("1")}); got != 1 {
		t.Errorf("LSI put = %g, want 1", got)
	}
}

func TestFromCreateTable(t *testing.T) {
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	got := billing.FromCreateTable(&dynamodb.CreateTableInput{
		KeySchema: key("PK", "SK"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("G1"), KeySchema: key("G1PK", "G1SK"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String("G2"), KeySchema: key("G2PK", "G2SK"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"x"}}},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("L1"), KeySchema: key("PK", "At"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
		},
	})
	want := billing.Table{PK: "PK", SK: "SK", Indexes: []billing.Index{
		{Name: "G1", PK: "G1PK", SK: "G1SK", Projection: billing.All},
		{Name: "G2", PK: "G2PK", SK: "G2SK", Projection: billing.Include("x")},
		{Name: "L1", PK: "PK", SK: "At", Local: true, Projection: billing.KeysOnly},
	}}
	if d := cmp.Diff(got, want, cmp.AllowUnexported(billing.Projection{})); d != "" {
		t.Errorf("FromCreateTable (-got +want):\n%s", d)
	}
}
