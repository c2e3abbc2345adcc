package store

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/access"
)

// An organization's request rate is one token bucket every copy of the
// service takes from: the item PK=ORG#{slug}, SK=RATE. It holds a single
// time, full_at (unix nanoseconds): when the bucket is full again. At a
// time now before full_at the bucket holds Burst − (full_at − now) × Rate
// tokens; at or after it, Burst. Taking k tokens moves full_at to
// max(full_at, now) + k/Rate, allowed while that is at most Burst/Rate
// after now: the token bucket exactly, in one number (the "generic cell
// rate algorithm").
//
// An update expression can add but not take a maximum, so there are two
// conditional writes, one for each side of max: a full bucket (no item,
// or full_at ≤ now) is SET to now + k/Rate; a partly spent one (full_at >
// now, and at most (Burst − k)/Rate after now, so that k tokens are in it)
// gets k/Rate ADDed. The caller passes the full_at it saw last, to pick
// the one likely to hold; a refused write returns the item as it is
// (ALL_OLD), from which the other write, or the answer "not enough
// tokens", follows.
//
// The item is under 100 bytes: every write, and every refused one, is one
// write request unit. Its ttl is when the bucket is full again at the
// latest, after which the item tells nothing an absent one does not.
const skRate = "RATE"

// Bucket is a token bucket (access.Bucket: package api's limiters name it
// without importing the store).
type Bucket = access.Bucket

// Lease is the answer of TakeTokens (access.Lease).
type Lease = access.Lease

// TakeTokens takes n tokens (n ≤ b.Burst) from org's shared bucket, or
// none when fewer are free: leases are whole blocks, so that a copy at the
// limit does not write for every token that trickles in. fullAt is the
// FullAt of the last lease (zero when none). It writes at most twice:
// when the bucket changed since fullAt so that the first write is
// refused, the second is made with what the first returned; when that is
// refused too (other copies are taking tokens at the same moment), Wait
// is n tokens' time. When fullAt says fewer than n tokens are free, it
// answers so without a write.
func (s *Store) TakeTokens(ctx context.Context, org string, b Bucket, n int, fullAt time.Time) (Lease, error) {
	return s.take(ctx, key(orgPK(org), skRate), b, n, fullAt)
}

// TakeFailureTokens is TakeTokens on the bucket of failed authentications
// from one client address (PK=AUTHFAIL#{address}, SK=RATE): every copy of
// every function counts a client's failures in one place.
func (s *Store) TakeFailureTokens(ctx context.Context, address string, b Bucket, n int, fullAt time.Time) (Lease, error) {
	return s.take(ctx, key("AUTHFAIL#"+address, skRate), b, n, fullAt)
}

func (s *Store) take(ctx context.Context, k map[string]types.AttributeValue, b Bucket, n int, fullAt time.Time) (Lease, error) {
	now := s.now()
	perToken := max(time.Duration(float64(time.Second)/b.Rate), 1)
	for try := 0; ; try++ {
		full := !fullAt.After(now)
		// n tokens are in the bucket while it is full again no later
		// than (Burst − n) tokens' time after now.
		if wait := fullAt.Sub(now) - time.Duration(b.Burst-n)*perToken; !full && wait > 0 {
			return Lease{Wait: wait, FullAt: fullAt}, nil
		}
		if try == 2 {
			return Lease{Wait: time.Duration(n) * perToken, FullAt: fullAt}, nil
		}
		out, err := s.updateItem(ctx, takeTokens(k, b, perToken, now, n, full))
		var refused *types.ConditionalCheckFailedException
		if errors.As(err, &refused) {
			fullAt = nanosAttr(refused.Item[attrFullAt]) // zero when there is no item
			continue
		}
		if err != nil {
			return Lease{}, err
		}
		return Lease{Taken: true, FullAt: nanosAttr(out[attrFullAt])}, nil
	}
}

// takeTokens is the write that takes n tokens at now from the bucket item
// k, full (full) or partly spent.
func takeTokens(k map[string]types.AttributeValue, b Bucket, perToken time.Duration, now time.Time, n int, full bool) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		Key:                      k,
		ConditionExpression:      aws.String(attrFullAt + " > :now AND " + attrFullAt + " <= :last"),
		UpdateExpression:         aws.String("SET " + attrFullAt + " = " + attrFullAt + " + :n, #ttl = :ttl"),
		ExpressionAttributeNames: map[string]string{"#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": num64(now.UnixNano()),
			":ttl": num64(now.Add(time.Duration(b.Burst)*perToken).Unix() + 1),
		},
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if full {
		in.ConditionExpression = aws.String("attribute_not_exists(" + attrFullAt + ") OR " + attrFullAt + " <= :now")
		in.UpdateExpression = aws.String("SET " + attrFullAt + " = :to, #ttl = :ttl")
		in.ExpressionAttributeValues[":to"] = num64(now.Add(time.Duration(n) * perToken).UnixNano())
	} else {
		in.ExpressionAttributeValues[":last"] = num64(now.Add(time.Duration(b.Burst-n) * perToken).UnixNano())
		in.ExpressionAttributeValues[":n"] = num64(int64(time.Duration(n) * perToken))
	}
	return in
}
