package store

// The store's generic item plumbing, in one place: encoding and decoding
// items and attribute values, update expressions, and the reads and writes
// that span several items (every page of a Query, BatchWriteItem with its
// retries). The entity files build on these; the single calls, counted
// once each, are in store.go.

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// Items as Go values.

// marshal encodes v as an item under key k.
func marshal(v any, k map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	for n, a := range k {
		item[n] = a
	}
	return item, nil
}

// unmarshal decodes an item into v.
func unmarshal(item map[string]types.AttributeValue, v any) error {
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return errs.Wrap(errs.Internal, err, "store failure")
	}
	return nil
}

// getInto reads one item into v, or NotFound with the given message.
func (s *Store) getInto(ctx context.Context, k map[string]types.AttributeValue, v any, notFound string, args ...any) error {
	item, err := s.getItem(ctx, k)
	if err != nil {
		return err
	}
	if item == nil {
		return errs.E(errs.NotFound, notFound, args...)
	}
	return unmarshal(item, v)
}

// unmarshalAll decodes the items of a query page.
func unmarshalAll[T any](items []map[string]types.AttributeValue) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, item := range items {
		var v T
		if err := unmarshal(item, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Reads and writes of several items.

// queryEach runs a Query to its last page, handing each item to fn.
func (s *Store) queryEach(ctx context.Context, in *dynamodb.QueryInput, fn func(map[string]types.AttributeValue) error) error {
	for {
		page, err := s.query(ctx, in)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			if err := fn(item); err != nil {
				return err
			}
		}
		if page.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// putAll puts items with BatchWriteItem (writeAll). A put of the same item
// twice is the same item.
func (s *Store) putAll(ctx context.Context, items []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(items))
	for i, item := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
	}
	return s.writeAll(ctx, reqs)
}

// writeAll sends write requests with BatchWriteItem, 25 at a time, sending
// again what DynamoDB left unprocessed: each is billed as a single write,
// not as a transaction's two.
func (s *Store) writeAll(ctx context.Context, reqs []types.WriteRequest) error {
	for len(reqs) > 0 {
		n := min(len(reqs), 25)
		pending := map[string][]types.WriteRequest{s.table: reqs[:n]}
		reqs = reqs[n:]
		for tries := 0; len(pending) > 0; tries++ {
			if tries > 0 {
				if err := backoff(ctx, tries); err != nil {
					return err
				}
			}
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			})
			if err != nil {
				usageOf(ctx).add()
				if err = translate(err); errs.Is(err, errs.Unavailable) && tries < 8 {
					continue
				}
				return err
			}
			usageOf(ctx).add(out.ConsumedCapacity...)
			pending = out.UnprocessedItems
		}
	}
	return nil
}

// Update expressions.

// update collects an update expression's clauses and values.
type update struct {
	set, add, remove []string
	names            map[string]string
	values           map[string]types.AttributeValue
}

func newUpdate() *update {
	return &update{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name and value return placeholders for an attribute name and a value.
func (u *update) name(n string) string {
	p := "#n" + strconv.Itoa(len(u.names))
	u.names[p] = n
	return p
}

func (u *update) value(v types.AttributeValue) string {
	p := ":v" + strconv.Itoa(len(u.values))
	u.values[p] = v
	return p
}

func (u *update) setTo(attr string, v types.AttributeValue) {
	u.set = append(u.set, u.name(attr)+" = "+u.value(v))
}

func (u *update) setIfAbsent(attr string, v types.AttributeValue) {
	n := u.name(attr)
	u.set = append(u.set, n+" = if_not_exists("+n+", "+u.value(v)+")")
}

func (u *update) addN(attr string, n int) {
	if n != 0 {
		u.add = append(u.add, u.name(attr)+" "+u.value(num(n)))
	}
}

func (u *update) expression() string {
	var parts []string
	if len(u.set) > 0 {
		parts = append(parts, "SET "+strings.Join(u.set, ", "))
	}
	if len(u.add) > 0 {
		parts = append(parts, "ADD "+strings.Join(u.add, ", "))
	}
	if len(u.remove) > 0 {
		parts = append(parts, "REMOVE "+strings.Join(u.remove, ", "))
	}
	return strings.Join(parts, " ")
}

// withRemove appends a REMOVE clause of names to an update expression.
func withRemove(expr string, names []string) string {
	if len(names) == 0 {
		return expr
	}
	return strings.TrimSpace(expr + " REMOVE " + strings.Join(names, ", "))
}

func capped(names []string, n int) []string { return names[:min(len(names), n)] }

// Attribute values.

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

func num(n int) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

func timeStr(t time.Time) *types.AttributeValueMemberS {
	return str(t.UTC().Format(time.RFC3339Nano))
}

func num64(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func intAttr(av types.AttributeValue) int {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.Atoi(n.Value)
	return v
}

func strAttr(av types.AttributeValue) string {
	s, _ := av.(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// nanosAttr reads a time stored as unix nanoseconds.
func nanosAttr(av types.AttributeValue) time.Time {
	v, ok := int64Attr(av)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// int64Attr reads a number attribute as an int64.
func int64Attr(av types.AttributeValue) (int64, bool) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}

// unixAttr reads a time stored as unix seconds; zero when absent.
func unixAttr(av types.AttributeValue) time.Time {
	v, ok := int64Attr(av)
	if !ok {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// timeAttr reads a time of a failure item: unix milliseconds (what the API
// shows, in fewer bytes than text) or, as the earlier layout had it,
// RFC 3339 text.
func timeAttr(av types.AttributeValue) time.Time {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		ms, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return time.Time{}
		}
		return time.UnixMilli(ms).UTC()
	}
	s, ok := av.(*types.AttributeValueMemberS)
	if !ok {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s.Value)
	return t
}

// skOf is an item's sort key.
func skOf(item map[string]types.AttributeValue) string { return strAttr(item[AttrSK]) }

// writeEach writes follow-up items one by one; an event already in the
// outbox is fine.
func (s *Store) writeEach(ctx context.Context, items []types.TransactWriteItem) error {
	for _, it := range items {
		switch {
		case it.Put != nil:
			err := s.putItem(ctx, &dynamodb.PutItemInput{
				Item: it.Put.Item, ConditionExpression: it.Put.ConditionExpression,
			})
			if err != nil && !errs.Is(err, errs.Conflict) {
				return err
			}
		case it.Update != nil:
			_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
				Key: it.Update.Key, UpdateExpression: it.Update.UpdateExpression,
				ExpressionAttributeNames: it.Update.ExpressionAttributeNames, ExpressionAttributeValues: it.Update.ExpressionAttributeValues,
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// pruneUnused drops the values neither cond nor the always-used names
// mention: DynamoDB refuses unused expression attribute values.
func pruneUnused(cond string, vals map[string]types.AttributeValue, always ...string) map[string]types.AttributeValue {
	for k := range vals {
		if !slices.Contains(always, k) && !strings.Contains(cond, k) {
			delete(vals, k)
		}
	}
	return vals
}

// Conditions and key conditions most reads and writes spell.
const (
	ifItemExists = "attribute_exists(" + AttrPK + ")"
	ifItemAbsent = "attribute_not_exists(" + AttrPK + ")"
	pkIs         = AttrPK + " = :pk"
	gsi1PKIs     = AttrGSI1PK + " = :pk"
	gsi2PKIs     = AttrGSI2PK + " = :pk"
)
