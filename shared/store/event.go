package store

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// EventRetention is how long an outbox event and its delivery log are kept.
const EventRetention = 30 * 24 * time.Hour

// Event is an outbound webhook event in the outbox. It is written in the
// same transaction as the change that caused it, so a change never happens
// without its event (at-least-once delivery starts here).
type Event struct {
	ID        string    `dynamodbav:"event_id"` // also the webhook-id of every delivery attempt
	Org       string    `dynamodbav:"org"`
	Type      string    `dynamodbav:"type"`
	Payload   string    `dynamodbav:"payload"` // the JSON body, rendered when the change happened
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// eventPut is the outbox write for ev. GSI1 lists an organization's pending
// events in order; delivery removes the GSI1 keys when it is done.
func (s *Store) eventPut(org string, ev Event) (*types.Put, error) {
	ev.Org = org
	item, err := marshal(ev, eventKey(org, ev.ID))
	if err != nil {
		return nil, err
	}
	item[AttrGSI1PK] = str(orgPK(org) + "#OUTBOX")
	item[AttrGSI1SK] = str(ev.CreatedAt.UTC().Format(SortableTime) + "#" + ev.ID)
	item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(ev.CreatedAt.Add(EventRetention).Unix(), 10)}
	return &types.Put{Item: item, ConditionExpression: aws.String(ifItemAbsent)}, nil
}

// SortableTime formats times in sort keys: fixed width, so that string
// order is time order (RFC 3339 "Nano" drops trailing zeros and is not).
const SortableTime = "2006-01-02T15:04:05.000000000Z"

// PendingEvents lists up to limit events of org not yet delivered, oldest
// first: one Query on GSI1.
func (s *Store) PendingEvents(ctx context.Context, org string, limit int32) ([]Event, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(orgPK(org) + "#OUTBOX")},
		Limit:                     aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	return unmarshalAll[Event](out.Items)
}
