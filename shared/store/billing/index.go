package billing

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table is what billing needs of a table: its key attributes and indexes.
type Table struct {
	PK, SK  string // SK is "" for a table without a sort key
	Indexes []Index
}

// Index is a secondary index.
type Index struct {
	Name, PK, SK string // SK is "" for an index without a sort key
	// Local marks a local secondary index, the only kind that serves
	// strongly consistent reads.
	Local      bool
	Projection Projection
}

// Projection is the set of attributes an index copies besides the keys:
// KeysOnly (the zero value), All, or Include(names...).
type Projection struct {
	all     bool
	include []string
}

var (
	KeysOnly = Projection{}
	All      = Projection{all: true}
)

// Include projects the named attributes besides the keys.
func Include(attrs ...string) Projection { return Projection{include: attrs} }

// FromCreateTable reads the keys and indexes of a table definition, so the
// billing view of a table cannot drift from the one that creates it.
func FromCreateTable(in *dynamodb.CreateTableInput) Table {
	var t Table
	t.PK, t.SK = keyNames(in.KeySchema)
	for _, g := range in.GlobalSecondaryIndexes {
		t.Indexes = append(t.Indexes, index(aws.ToString(g.IndexName), g.KeySchema, g.Projection, false))
	}
	for _, l := range in.LocalSecondaryIndexes {
		t.Indexes = append(t.Indexes, index(aws.ToString(l.IndexName), l.KeySchema, l.Projection, true))
	}
	return t
}

func index(name string, ks []types.KeySchemaElement, p *types.Projection, local bool) Index {
	ix := Index{Name: name, Local: local}
	ix.PK, ix.SK = keyNames(ks)
	if p != nil {
		switch p.ProjectionType {
		case types.ProjectionTypeAll:
			ix.Projection = All
		case types.ProjectionTypeInclude:
			ix.Projection = Include(p.NonKeyAttributes...)
		}
	}
	return ix
}

func keyNames(ks []types.KeySchemaElement) (pk, sk string) {
	for _, k := range ks {
		if k.KeyType == types.KeyTypeHash {
			pk = aws.ToString(k.AttributeName)
		} else {
			sk = aws.ToString(k.AttributeName)
		}
	}
	return pk, sk
}

// consistentReadable reports whether a read of the named index ("" for the
// table) can be strongly consistent. An index the table does not list is
// taken for a global one.
func (t Table) consistentReadable(index string) bool {
	if index == "" {
		return true
	}
	i := slices.IndexFunc(t.Indexes, func(ix Index) bool { return ix.Name == index })
	return i >= 0 && t.Indexes[i].Local
}

// IndexWriteUnits is what t's indexes bill for a write that turned before
// into after (nil: no item), on top of the table's own write. Per index:
//
//   - in the index neither before nor after: nothing;
//   - after only: a put of the new entry;
//   - before only: a delete of the old entry;
//   - both, with an index key changed: a delete and a put, each rounded alone;
//   - both, same keys, a projected attribute changed: one write of the
//     larger entry;
//   - both, nothing projected changed: nothing.
//
// The LSI page lists the same cases except the last two; an LSI entry must
// be rewritten when a projected attribute changes all the same, so both kinds
// of index are billed alike.
func (t Table) IndexWriteUnits(before, after map[string]types.AttributeValue) float64 {
	u := 0.0
	for _, ix := range t.Indexes {
		old, cur := t.entry(ix, before), t.entry(ix, after)
		switch {
		case old == nil && cur == nil:
		case old == nil:
			u += WriteUnits(ItemSize(cur))
		case cur == nil:
			u += WriteUnits(ItemSize(old))
		case !sameAttr(old, cur, ix.PK) || !sameAttr(old, cur, ix.SK):
			u += WriteUnits(ItemSize(old)) + WriteUnits(ItemSize(cur))
		case !sameMap(old, cur):
			u += WriteUnits(max(ItemSize(old), ItemSize(cur)))
		}
	}
	return u
}

// entry is item's entry in ix, nil when the item lacks one of the index's
// key attributes (an index holds only items that have them). An entry is the
// table's keys, the index's keys and the projected attributes, which is also
// what its size is counted on.
func (t Table) entry(ix Index, item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item[ix.PK] == nil || ix.SK != "" && item[ix.SK] == nil {
		return nil
	}
	if ix.Projection.all {
		return item
	}
	e := map[string]types.AttributeValue{}
	for _, name := range append([]string{t.PK, t.SK, ix.PK, ix.SK}, ix.Projection.include...) {
		if v, ok := item[name]; ok && name != "" {
			e[name] = v
		}
	}
	return e
}

func sameAttr(a, b map[string]types.AttributeValue, name string) bool {
	return name == "" || same(a[name], b[name])
}

func sameMap(a, b map[string]types.AttributeValue) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !same(v, w) {
			return false
		}
	}
	return true
}

// same reports whether two values are equal as DynamoDB stores them:
// numbers by value (1.0 is 1), sets without regard to order. A rewrite that
// only reorders a set or reformats a number changes no index entry.
func same(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && number(x.Value) == number(y.Value)
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		y, ok := b.(*types.AttributeValueMemberNULL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value, func(s string) string { return s })
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && sameSet(x.Value, y.Value, number)
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && sameSet(x.Value, y.Value, func(b []byte) string { return string(b) })
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		return ok && slices.EqualFunc(x.Value, y.Value, same)
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		return ok && sameMap(x.Value, y.Value)
	}
	return a == nil && b == nil
}

func sameSet[T any](a, b []T, key func(T) string) bool {
	if len(a) != len(b) {
		return false
	}
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i], kb[i] = key(a[i]), key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// number is the canonical form of a decimal number, so that equal values
// compare equal however they are spelled (1, 1.0, 10E-1).
func number(s string) string {
	neg, digits, exp := decimal(s)
	if digits == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + digits + "e" + strconv.Itoa(exp)
}
