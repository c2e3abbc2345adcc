package store

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A GitHub object made once and edited after (the queue's comment on a
// pull request, the tests' check run on a commit) is remembered by a small
// item: its id attribute (0 until made) and claimed_at (unix ns), when a
// writer last claimed its making. Before making it a writer claims the
// item, so a second writer does not make a second object while the first
// is at it; a claim older than staleBefore (its writer died) may be taken
// over, and the new claimant looks for the object on GitHub first.

// madeOnce reads such an item: the object's id and when it was claimed;
// found is false when there is no item.
func (s *Store) madeOnce(ctx context.Context, k map[string]types.AttributeValue, idAttr string) (id int64, claimedAt time.Time, found bool, err error) {
	item, err := s.getItem(ctx, k)
	if err != nil || item == nil {
		return 0, time.Time{}, false, err
	}
	if v, ok := item[idAttr].(*types.AttributeValueMemberN); ok {
		id, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	if item[attrClaimedAt] != nil {
		claimedAt = nanosAttr(item[attrClaimedAt])
	}
	return id, claimedAt, true, nil
}

// claimMaking claims the making of the object at now: it holds when no
// writer claimed it since staleBefore; a fresh claim of another is
// errs.Conflict. A non-zero expires sets the item's TTL.
func (s *Store) claimMaking(ctx context.Context, k map[string]types.AttributeValue, now, staleBefore, expires time.Time) error {
	set := "SET " + attrClaimedAt + " = :now"
	vals := map[string]types.AttributeValue{":now": num64(now.UnixNano()), ":stale": num64(staleBefore.UnixNano())}
	if !expires.IsZero() {
		set += ", #ttl = :ttl"
		vals[":ttl"] = num64(expires.Unix())
	}
	in := &dynamodb.UpdateItemInput{
		Key:                       k,
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("attribute_not_exists(" + attrClaimedAt + ") OR " + attrClaimedAt + " < :stale"),
		ExpressionAttributeValues: vals,
	}
	if !expires.IsZero() {
		in.ExpressionAttributeNames = map[string]string{"#ttl": AttrTTL}
	}
	_, err := s.updateItem(ctx, in)
	return err
}

// setMadeID remembers the made object's id.
func (s *Store) setMadeID(ctx context.Context, k map[string]types.AttributeValue, idAttr string, id int64) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       k,
		UpdateExpression:          aws.String("SET #id = :id"),
		ExpressionAttributeNames:  map[string]string{"#id": idAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": num64(id)},
	})
	return err
}
