package store

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store/billing"
)

// DB is the part of the DynamoDB client the store uses; *dynamodb.Client
// implements it, and so can a wrapper that injects faults in tests or
// bills each call (billing.Meter), which is why billing defines it.
type DB = billing.DB

// Store reads and writes the single table.
type Store struct {
	db    DB
	table string
	now   func() time.Time
}

// New returns a store on table through db; now is the clock (nil: time.Now).
func New(db DB, table string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, table: table, now: now}
}

// Table names the table the store works on.
func (s *Store) Table() string { return s.table }

// Usage counts the DynamoDB calls one request made and the capacity units
// they consumed (billing.Usage: the request log reads it without the store).
type Usage = billing.Usage

// WithUsage returns a context whose DynamoDB calls are counted in the
// returned Usage.
func WithUsage(ctx context.Context) (context.Context, *Usage) { return billing.WithUsage(ctx) }

// usage is the Usage of one call's context.
type usage struct{ u *Usage }

func usageOf(ctx context.Context) usage { return usage{billing.UsageOf(ctx)} }

// add counts one call and the capacity DynamoDB said it consumed.
func (u usage) add(ccs ...types.ConsumedCapacity) {
	var capacity float64
	for _, cc := range ccs {
		capacity += aws.ToFloat64(cc.CapacityUnits)
	}
	u.u.Add(capacity)
}

// Every call goes through one of these so that it is counted once; each asks
// DynamoDB for the consumed capacity (TOTAL costs nothing extra).

func (s *Store) getItem(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: key, ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		usageOf(ctx).add()
		return nil, translate(err)
	}
	usageOf(ctx).add(cc(out.ConsumedCapacity)...)
	return out.Item, nil
}

func (s *Store) putItem(ctx context.Context, in *dynamodb.PutItemInput) error {
	in.TableName, in.ReturnConsumedCapacity = &s.table, types.ReturnConsumedCapacityTotal
	out, err := s.db.PutItem(ctx, in)
	if err != nil {
		usageOf(ctx).add()
		return translate(err)
	}
	usageOf(ctx).add(cc(out.ConsumedCapacity)...)
	return nil
}

func (s *Store) updateItem(ctx context.Context, in *dynamodb.UpdateItemInput) (map[string]types.AttributeValue, error) {
	in.TableName, in.ReturnConsumedCapacity = &s.table, types.ReturnConsumedCapacityTotal
	out, err := s.db.UpdateItem(ctx, in)
	if err != nil {
		usageOf(ctx).add()
		return nil, translate(err)
	}
	usageOf(ctx).add(cc(out.ConsumedCapacity)...)
	return out.Attributes, nil
}

func (s *Store) query(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	in.TableName, in.ReturnConsumedCapacity = &s.table, types.ReturnConsumedCapacityTotal
	out, err := s.db.Query(ctx, in)
	if err != nil {
		usageOf(ctx).add()
		return nil, translate(err)
	}
	usageOf(ctx).add(cc(out.ConsumedCapacity)...)
	return out, nil
}

func (s *Store) transact(ctx context.Context, items ...types.TransactWriteItem) error {
	for i := range items {
		if tn := tableOf(&items[i]); tn != nil {
			*tn = &s.table
		}
	}
	out, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: items, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		usageOf(ctx).add()
		return translate(err)
	}
	usageOf(ctx).add(out.ConsumedCapacity...)
	return nil
}

// batchGet reads items by key, consistently, 100 keys per call (the
// service's limit), asking again for what DynamoDB left unprocessed. Absent
// items are simply not returned; the order is not that of keys.
func (s *Store) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	return s.batchGetConsistency(ctx, keys, true)
}

// batchGetConsistency is batchGet, with eventually consistent reads (half
// the price) when not consistent.
func (s *Store) batchGetConsistency(ctx context.Context, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for len(keys) > 0 {
		n := min(len(keys), 100)
		pending := map[string]types.KeysAndAttributes{s.table: {Keys: keys[:n], ConsistentRead: aws.Bool(consistent)}}
		keys = keys[n:]
		for tries := 0; len(pending) > 0; tries++ {
			if tries > 0 {
				if err := backoff(ctx, tries); err != nil {
					return nil, err
				}
			}
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: pending, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
			})
			if err != nil {
				usageOf(ctx).add()
				return nil, translate(err)
			}
			usageOf(ctx).add(res.ConsumedCapacity...)
			out = append(out, res.Responses[s.table]...)
			pending = res.UnprocessedKeys
		}
	}
	return out, nil
}

// backoff waits before retry number try (1, 2, ...): exponential from
// 20 ms, capped at 1 s, with jitter so that competing writers spread out.
func backoff(ctx context.Context, try int) error {
	d := 20 * time.Millisecond << min(try-1, 6)
	d = min(d, time.Second)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errs.Wrap(errs.Unavailable, ctx.Err(), "the store did not answer in time")
	case <-t.C:
		return nil
	}
}

// tableOf points at the table name field of whichever action item holds.
func tableOf(item *types.TransactWriteItem) **string {
	switch {
	case item.Put != nil:
		return &item.Put.TableName
	case item.Update != nil:
		return &item.Update.TableName
	case item.Delete != nil:
		return &item.Delete.TableName
	case item.ConditionCheck != nil:
		return &item.ConditionCheck.TableName
	}
	return nil
}

func cc(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// translate turns SDK errors into domain errors so that no SDK type or text
// travels upward: a failed condition, also inside a cancelled transaction,
// is a conflict; throttling and unreachable service are "unavailable".
func translate(err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errs.Wrap(errs.Conflict, err, "the item changed or does not exist")
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		cf := &conditionFailed{err: err}
		permanent := false
		for i, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				cf.actions = append(cf.actions, i)
			case "ValidationError", "ItemCollectionSizeLimitExceeded":
				permanent = true // the same request fails the same way
			}
		}
		switch {
		case len(cf.actions) > 0:
			return errs.Wrap(errs.Conflict, cf, "the item changed or does not exist")
		case permanent:
			return errs.Wrap(errs.Internal, err, "store failure")
		}
		return errs.Wrap(errs.Unavailable, err, "the store is busy, try again")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(errs.Unavailable, err, "the store did not answer in time")
	}
	// The store could not be reached or broke the connection (refused,
	// reset, timed out, cut short), or answered with a server error: a
	// retry may well succeed.
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	var resp *smithyhttp.ResponseError
	if errors.As(err, &send) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return errs.Wrap(errs.Unavailable, err, "the store is unavailable, try again")
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"TransactionConflictException":
			return errs.Wrap(errs.Unavailable, err, "the store is busy, try again")
		case "ResourceNotFoundException", "ServiceUnavailable", "InternalServerError":
			return errs.Wrap(errs.Unavailable, err, "the store is unavailable, try again")
		}
	}
	return errs.Wrap(errs.Internal, err, "store failure")
}

// conditionFailed records which actions of a cancelled transaction failed
// their condition, so a caller can tell "the test is gone" from "the event
// exists already".
type conditionFailed struct {
	actions []int
	err     error
}

func (c *conditionFailed) Error() string { return c.err.Error() }
func (c *conditionFailed) Unwrap() error { return c.err }

// failedAction reports whether err is a transaction whose action i failed
// its condition.
func failedAction(err error, i int) bool {
	var cf *conditionFailed
	if errors.As(err, &cf) {
		for _, a := range cf.actions {
			if a == i {
				return true
			}
		}
	}
	return false
}

// Ping reads a fixed key to tell whether the table answers: one GetItem.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.getItem(ctx, key("HEALTH", "HEALTH"))
	return err
}
