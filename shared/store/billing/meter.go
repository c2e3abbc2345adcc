package billing

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DB is the part of the DynamoDB client the store uses (store.DB).
type DB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ DB = (*dynamodb.Client)(nil)

// Meter is a DB that bills every call it passes on, by the rules of this
// package, into Bill (when set) and the context's Bill (WithBill): what AWS would charge, where DynamoDB Local's own
// figure counts a transaction once and no index copy. A write's before and
// after images are read around it (consistent GetItems that are not
// billed), so it is for tests and benchmarks, with one writer per item at
// a time: a concurrent writer's change would be billed to this call.
type Meter struct {
	DB    DB
	Table Table
	Bill  *Bill
}

// NewMeter meters db for the table spec (store.TableSpec).
func NewMeter(db DB, spec *dynamodb.CreateTableInput) *Meter {
	return &Meter{DB: db, Table: FromCreateTable(spec), Bill: &Bill{}}
}

func (m *Meter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := m.DB.GetItem(ctx, in, opts...)
	if err == nil {
		m.add(ctx, Call{Kind: Get, Consistent: consistent(in.ConsistentRead), Read: []*Image{Of(out.Item)}})
	}
	return out, err
}

func (m *Meter) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := m.DB.BatchGetItem(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	for table, ka := range in.RequestItems {
		got := out.Responses[table]
		images := make([]*Image, 0, len(ka.Keys))
		for _, item := range got {
			images = append(images, Of(item))
		}
		// Keys asked for and neither returned nor left unprocessed were
		// absent: each bills the minimum.
		missing := len(ka.Keys) - len(got) - len(out.UnprocessedKeys[table].Keys)
		for range max(missing, 0) {
			images = append(images, nil)
		}
		m.add(ctx, Call{Kind: BatchGet, Consistent: consistent(ka.ConsistentRead), Read: images})
	}
	return out, err
}

func (m *Meter) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := m.DB.Query(ctx, in, opts...)
	if err == nil {
		images := make([]*Image, len(out.Items))
		for i, item := range out.Items {
			images[i] = Of(item)
		}
		index := ""
		if in.IndexName != nil {
			index = *in.IndexName
		}
		m.add(ctx, Call{Kind: Query, Consistent: consistent(in.ConsistentRead), Index: index, Read: images})
	}
	return out, err
}

func (m *Meter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	key := m.keyOf(in.Item)
	before := m.image(ctx, in.TableName, key)
	out, err := m.DB.PutItem(ctx, in, opts...)
	m.write(ctx, Put, in.TableName, key, before, err)
	return out, err
}

func (m *Meter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	before := m.image(ctx, in.TableName, in.Key)
	out, err := m.DB.UpdateItem(ctx, in, opts...)
	m.write(ctx, Update, in.TableName, in.Key, before, err)
	return out, err
}

// BatchWriteItem bills each put or delete that DynamoDB processed as a
// write of that item (a batch is not a transaction: no doubling).
func (m *Meter) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	type req struct {
		table  string
		key    map[string]types.AttributeValue
		before *Image
	}
	var reqs []req
	for table, ws := range in.RequestItems {
		for _, w := range ws {
			r := req{table: table}
			switch {
			case w.PutRequest != nil:
				r.key = m.keyOf(w.PutRequest.Item)
			case w.DeleteRequest != nil:
				r.key = w.DeleteRequest.Key
			default:
				continue
			}
			r.before = m.image(ctx, &r.table, r.key)
			reqs = append(reqs, r)
		}
	}
	out, err := m.DB.BatchWriteItem(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	unprocessed := map[string]bool{}
	for table, ws := range out.UnprocessedItems {
		for _, w := range ws {
			k := map[string]types.AttributeValue(nil)
			if w.PutRequest != nil {
				k = m.keyOf(w.PutRequest.Item)
			} else if w.DeleteRequest != nil {
				k = w.DeleteRequest.Key
			}
			unprocessed[table+"\x00"+m.keyString(k)] = true
		}
	}
	c := Call{Kind: BatchWrite}
	for _, r := range reqs {
		if unprocessed[r.table+"\x00"+m.keyString(r.key)] {
			continue
		}
		c.Writes = append(c.Writes, Write{Before: r.before, After: m.image(ctx, &r.table, r.key)})
	}
	m.add(ctx, c)
	return out, err
}

// keyString spells a key's string and number values, for comparing keys.
func (m *Meter) keyString(k map[string]types.AttributeValue) string {
	var b []byte
	for _, name := range []string{m.Table.PK, m.Table.SK} {
		switch v := k[name].(type) {
		case *types.AttributeValueMemberS:
			b = append(b, v.Value...)
		case *types.AttributeValueMemberN:
			b = append(b, v.Value...)
		}
		b = append(b, 0)
	}
	return string(b)
}

func (m *Meter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	type action struct {
		table  *string
		key    map[string]types.AttributeValue
		before *Image
		check  bool
	}
	actions := make([]action, len(in.TransactItems))
	for i, it := range in.TransactItems {
		a := &actions[i]
		switch {
		case it.Put != nil:
			a.table, a.key = it.Put.TableName, m.keyOf(it.Put.Item)
		case it.Update != nil:
			a.table, a.key = it.Update.TableName, it.Update.Key
		case it.Delete != nil:
			a.table, a.key = it.Delete.TableName, it.Delete.Key
		case it.ConditionCheck != nil:
			a.table, a.key, a.check = it.ConditionCheck.TableName, it.ConditionCheck.Key, true
		}
		a.before = m.image(ctx, a.table, a.key)
	}
	out, err := m.DB.TransactWriteItems(ctx, in, opts...)
	if err != nil && !billed(err) {
		return out, err
	}
	c := Call{Kind: TransactWrite}
	for _, a := range actions {
		w := Write{Before: a.before, After: a.before, Failed: err != nil}
		if !a.check && err == nil {
			w.After = m.image(ctx, a.table, a.key)
		}
		c.Writes = append(c.Writes, w)
	}
	m.add(ctx, c)
	return out, err
}

// add bills c into the meter's Bill and the context's.
func (m *Meter) add(ctx context.Context, c Call) {
	if m.Bill != nil {
		m.Bill.Add(c, m.Table)
	}
	if b := BillOf(ctx); b != nil {
		b.Add(c, m.Table)
	}
}

// write bills a single-item write from the item before and after it. A
// write refused by its condition bills too; one that never reached the
// table does not.
func (m *Meter) write(ctx context.Context, k Kind, table *string, key map[string]types.AttributeValue, before *Image, err error) {
	if err != nil && !billed(err) {
		return
	}
	w := Write{Before: before, After: before, Failed: err != nil}
	if err == nil {
		w.After = m.image(ctx, table, key)
	}
	m.add(ctx, Call{Kind: k, Writes: []Write{w}})
}

// billed reports whether a failed write still consumed capacity: a
// condition that did not hold, alone or inside a transaction.
func billed(err error) bool {
	var cond *types.ConditionalCheckFailedException
	var cancelled *types.TransactionCanceledException
	return errors.As(err, &cond) || errors.As(err, &cancelled)
}

// image reads an item as it is now, outside the bill.
func (m *Meter) image(ctx context.Context, table *string, key map[string]types.AttributeValue) *Image {
	t := true
	out, err := m.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: &t})
	if err != nil {
		return nil
	}
	return Of(out.Item)
}

// keyOf is an item's primary key.
func (m *Meter) keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	key := map[string]types.AttributeValue{m.Table.PK: item[m.Table.PK]}
	if m.Table.SK != "" {
		key[m.Table.SK] = item[m.Table.SK]
	}
	return key
}

func consistent(b *bool) bool { return b != nil && *b }
