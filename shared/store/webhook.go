package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// Webhook items (contract 4). Keys, all under the organization:
//
//	endpoint          PK=ORG#{slug}                 SK=WEBHOOK#{endpoint}
//	delivery state    PK=ORG#{slug}#EVENT#{event}   SK=DELIVERY#{endpoint}
//	attempt log       PK=ORG#{slug}#EVENT#{event}   SK=ATTEMPT#{endpoint}#{cycle:04}#{attempt:02}
//	                  GSI1PK=ORG#{slug}#WEBHOOK#{endpoint}#LOG  GSI1SK={at}#{event}#{cycle}#{attempt}
//
// Delivery state and attempts share the event's partition, so everything
// about one event is one Query. The outbox index (GSI1SK of the event item,
// written by eventPut as {created}#{id}) is rewritten to {next due}#{id}
// while the event waits for a retry, so "which events are due" is one
// range Query however many events wait for a later retry.

// SecretRotationGrace is how long a rotated-out endpoint secret still signs
// deliveries beside the new one, so receivers can switch without losing any.
const SecretRotationGrace = 24 * time.Hour

// WebhookEndpoint is a receiver of an organization's events.
type WebhookEndpoint struct {
	ID     string `dynamodbav:"endpoint_id"`
	Org    string `dynamodbav:"org"`
	URL    string `dynamodbav:"url"`
	Secret string `dynamodbav:"secret"` // whsec_…
	// PreviousSecret signs too until PreviousUntil, after a rotation.
	PreviousSecret string     `dynamodbav:"previous_secret,omitempty"`
	PreviousUntil  *time.Time `dynamodbav:"previous_until,omitempty"`
	// EventTypes filters the events sent; empty means every type.
	EventTypes []string  `dynamodbav:"event_types,omitempty"`
	CreatedAt  time.Time `dynamodbav:"created_at"`
}

// Subscribed reports whether the endpoint receives events of type t.
func (e WebhookEndpoint) Subscribed(t string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, t)
}

// Receives reports whether the endpoint is sent ev: it is subscribed to
// its type and existed when ev happened. As Svix does, an endpoint added
// after an event was written never receives it, not on a replay either:
// it subscribed to what happens from then on, not to the outbox's past.
// Both times come from the clocks of the writers (the endpoint's adder,
// the change's function), synchronised to well under any gap between a
// human adding an endpoint and a change that matters to it.
func (e WebhookEndpoint) Receives(ev Event) bool {
	return e.Subscribed(ev.Type) && !e.CreatedAt.After(ev.CreatedAt)
}

// Secrets returns the secrets that sign a delivery at now: the current one,
// and the previous one while its grace period lasts.
func (e WebhookEndpoint) Secrets(now time.Time) []string {
	if e.PreviousSecret != "" && e.PreviousUntil != nil && now.Before(*e.PreviousUntil) {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// validEndpointID: 1 to 64 letters, digits, '-' or '_'.
func validEndpointID(id string) bool {
	return len(id) >= 1 && len(id) <= 64 && onlyBytes(id, func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
	})
}

func endpointKey(org, id string) map[string]types.AttributeValue {
	return key(orgPK(org), "WEBHOOK#"+id)
}

// AddWebhookEndpoint stores a new endpoint of org; the caller chooses the id
// and the secret and has checked the URL. NotFound when the organization
// does not exist, Conflict when the id is taken, Invalid for a malformed id,
// an empty URL or a secret without the whsec_ prefix.
func (s *Store) AddWebhookEndpoint(ctx context.Context, org string, ep WebhookEndpoint) (WebhookEndpoint, error) {
	switch {
	case !validEndpointID(ep.ID):
		return WebhookEndpoint{}, errs.E(errs.Invalid, "endpoint id must be 1 to 64 letters, digits, '-' or '_'")
	case ep.URL == "":
		return WebhookEndpoint{}, errs.E(errs.Invalid, "endpoint url must not be empty")
	case !strings.HasPrefix(ep.Secret, "whsec_"):
		return WebhookEndpoint{}, errs.E(errs.Invalid, "endpoint secret must start with whsec_")
	}
	ep.Org, ep.CreatedAt = org, s.now().UTC()
	ep.PreviousSecret, ep.PreviousUntil = "", nil
	item, err := marshal(ep, endpointKey(org, ep.ID))
	if err != nil {
		return WebhookEndpoint{}, err
	}
	err = s.transact(ctx,
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			Key: orgKey(org), ConditionExpression: aws.String(ifItemExists),
		}},
		types.TransactWriteItem{Put: &types.Put{Item: item, ConditionExpression: aws.String(ifItemAbsent)}},
	)
	switch {
	case failedAction(err, 0):
		return WebhookEndpoint{}, errs.Wrap(errs.NotFound, err, "organization %q not found", org)
	case failedAction(err, 1):
		return WebhookEndpoint{}, errs.Wrap(errs.Conflict, err, "organization %q already has an endpoint %s", org, ep.ID)
	case err != nil:
		return WebhookEndpoint{}, err
	}
	return ep, nil
}

// WebhookEndpoint reads one endpoint; NotFound when absent.
func (s *Store) WebhookEndpoint(ctx context.Context, org, id string) (WebhookEndpoint, error) {
	var ep WebhookEndpoint
	err := s.getInto(ctx, endpointKey(org, id), &ep, "organization %q has no webhook endpoint %s", org, id)
	return ep, err
}

// WebhookEndpoints lists the endpoints of org in id order: one Query on the
// organization's partition (paged when it grows past 1 MB).
func (s *Store) WebhookEndpoints(ctx context.Context, org string) ([]WebhookEndpoint, error) {
	var out []WebhookEndpoint
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(orgPK(org)), ":sk": str("WEBHOOK#"),
		},
		ConsistentRead: aws.Bool(true),
	}, func(item map[string]types.AttributeValue) error {
		var ep WebhookEndpoint
		err := unmarshal(item, &ep)
		out = append(out, ep)
		return err
	})
	return out, err
}

// RemoveWebhookEndpoint deletes an endpoint; NotFound when absent. Its
// delivery log stays until it expires. Pending events stop being sent to
// it at their next delivery pass.
func (s *Store) RemoveWebhookEndpoint(ctx context.Context, org, id string) error {
	// A one-action transaction: the store's DB interface has no DeleteItem.
	err := s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{
		Key: endpointKey(org, id), ConditionExpression: aws.String(ifItemExists),
	}})
	if failedAction(err, 0) {
		return errs.Wrap(errs.NotFound, err, "organization %q has no webhook endpoint %s", org, id)
	}
	return err
}

// RotateWebhookSecret makes secret the endpoint's signing secret; the old
// one keeps signing beside it for SecretRotationGrace. NotFound when absent.
func (s *Store) RotateWebhookSecret(ctx context.Context, org, id, secret string) (WebhookEndpoint, error) {
	if !strings.HasPrefix(secret, "whsec_") {
		return WebhookEndpoint{}, errs.E(errs.Invalid, "endpoint secret must start with whsec_")
	}
	until := s.now().UTC().Add(SecretRotationGrace)
	attrs, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                 endpointKey(org, id),
		UpdateExpression:    aws.String("SET " + attrPreviousSecret + " = " + attrSecret + ", " + attrPreviousUntil + " = :until, " + attrSecret + " = :new"),
		ConditionExpression: aws.String(ifItemExists),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until": str(until.Format(time.RFC3339Nano)), ":new": str(secret),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if errs.Is(err, errs.Conflict) {
		return WebhookEndpoint{}, errs.Wrap(errs.NotFound, err, "organization %q has no webhook endpoint %s", org, id)
	}
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var ep WebhookEndpoint
	err = unmarshal(attrs, &ep)
	return ep, err
}

// OutboxEvent is an event item as delivery sees it.
type OutboxEvent struct {
	Event
	// Cycle counts replays: 0 for the first delivery cycle. Delivery state
	// of an older cycle is ignored, so a replay starts every endpoint over.
	Cycle int `dynamodbav:"delivery_cycle"`
	// Pending is whether the event is in the outbox index.
	Pending bool `dynamodbav:"-"`
}

func eventPartition(org, id string) string { return orgPK(org) + "#EVENT#" + id }

func outboxPK(org string) string { return orgPK(org) + "#OUTBOX" }

func outboxSK(due time.Time, id string) string { return due.UTC().Format(SortableTime) + "#" + id }

// cycleIs is the condition that the event item is in the given cycle; the
// first cycle has no attribute.
func cycleIs(cycle int) string {
	if cycle == 0 {
		return "(attribute_not_exists(" + attrDeliveryCycle + ") OR " + attrDeliveryCycle + " = :cycle)"
	}
	return attrDeliveryCycle + " = :cycle"
}

// EnqueueEvent puts an event in the outbox on its own. Events caused by a
// change are written in that change's transaction instead; this is for
// events with no change to go with, such as an endpoint's test message.
// Conflict when the id exists.
func (s *Store) EnqueueEvent(ctx context.Context, org string, ev Event) error {
	put, err := s.eventPut(org, ev)
	if err != nil {
		return err
	}
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: put.Item, ConditionExpression: put.ConditionExpression})
}

// DueEvents lists up to limit outbox events of org due at now (their next
// delivery pass is at or before now), earliest due first: one Query on
// GSI1. after is the cursor a previous call returned, "" to start; the
// returned cursor is "" when there is nothing more.
func (s *Store) DueEvents(ctx context.Context, org string, now time.Time, limit int32, after string) ([]OutboxEvent, string, error) {
	in := &dynamodb.QueryInput{
		IndexName:              aws.String(IndexGSI1),
		KeyConditionExpression: aws.String(gsi1PKIs + " AND " + AttrGSI1SK + " < :upper"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(outboxPK(org)),
			// '$' sorts just after '#': every key whose time is <= now.
			":upper": str(now.UTC().Format(SortableTime) + "$"),
		},
		Limit: aws.Int32(limit),
	}
	if after != "" {
		_, id, ok := strings.Cut(after, "#")
		if !ok {
			return nil, "", errs.E(errs.Invalid, "bad outbox cursor")
		}
		in.ExclusiveStartKey = key(eventPartition(org, id), skEvent)
		in.ExclusiveStartKey[AttrGSI1PK], in.ExclusiveStartKey[AttrGSI1SK] = str(outboxPK(org)), str(after)
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return nil, "", err
	}
	evs := make([]OutboxEvent, 0, len(out.Items))
	next := ""
	for _, item := range out.Items {
		var ev OutboxEvent
		if err := unmarshal(item, &ev); err != nil {
			return nil, "", err
		}
		ev.Pending = true
		evs = append(evs, ev)
		if sk, ok := item[AttrGSI1SK].(*types.AttributeValueMemberS); ok {
			next = sk.Value
		}
	}
	if out.LastEvaluatedKey == nil {
		next = ""
	}
	return evs, next, nil
}

// OutboxEvent reads an event by id, pending or not (for replay and the
// delivery log); NotFound when absent or expired.
func (s *Store) OutboxEvent(ctx context.Context, org, id string) (OutboxEvent, error) {
	item, err := s.getItem(ctx, eventKey(org, id))
	if err != nil {
		return OutboxEvent{}, err
	}
	if item == nil {
		return OutboxEvent{}, errs.E(errs.NotFound, "organization %q has no event %s", org, id)
	}
	var ev OutboxEvent
	if err := unmarshal(item, &ev); err != nil {
		return OutboxEvent{}, err
	}
	_, ev.Pending = item[AttrGSI1PK]
	return ev, nil
}

// RescheduleEvent sets when the event's next delivery pass is due. Conflict
// when the event left the outbox or was replayed meanwhile.
func (s *Store) RescheduleEvent(ctx context.Context, org, id string, cycle int, due time.Time) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       eventKey(org, id),
		UpdateExpression:          aws.String("SET " + AttrGSI1SK + " = :sk"),
		ConditionExpression:       aws.String("attribute_exists(" + AttrGSI1PK + ") AND " + cycleIs(cycle)),
		ExpressionAttributeValues: map[string]types.AttributeValue{":sk": str(outboxSK(due, id)), ":cycle": num64(int64(cycle))},
	})
	return err
}

// FinishEvent takes an event out of the outbox index once every endpoint has
// been served or given up on. Conflict when it is out already or was
// replayed meanwhile (the new cycle is not finished).
func (s *Store) FinishEvent(ctx context.Context, org, id string, cycle int) error {
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                       eventKey(org, id),
		UpdateExpression:          aws.String("REMOVE " + AttrGSI1PK + ", " + AttrGSI1SK),
		ConditionExpression:       aws.String("attribute_exists(" + AttrGSI1PK + ") AND " + cycleIs(cycle)),
		ExpressionAttributeValues: map[string]types.AttributeValue{":cycle": num64(int64(cycle))},
	})
	return err
}

// ReplayEvent puts a delivered (or given-up) event back in the outbox with a
// new delivery cycle and the same id, due now; its retention restarts.
// NotFound when absent, Conflict while it is still pending.
func (s *Store) ReplayEvent(ctx context.Context, org, id string) (OutboxEvent, error) {
	now := s.now().UTC()
	attrs, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key:                      eventKey(org, id),
		UpdateExpression:         aws.String("SET " + AttrGSI1PK + " = :pk, " + AttrGSI1SK + " = :sk, " + attrDeliveryCycle + " = if_not_exists(" + attrDeliveryCycle + ", :zero) + :one, #ttl = :ttl"),
		ConditionExpression:      aws.String(ifItemExists + " AND attribute_not_exists(" + AttrGSI1PK + ")"),
		ExpressionAttributeNames: map[string]string{"#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(outboxPK(org)), ":sk": str(outboxSK(now, id)), ":zero": num64(0), ":one": num64(1),
			":ttl": num64(now.Add(EventRetention).Unix()),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if errs.Is(err, errs.Conflict) {
		if _, gerr := s.OutboxEvent(ctx, org, id); errs.Is(gerr, errs.NotFound) {
			return OutboxEvent{}, gerr
		}
		return OutboxEvent{}, errs.Wrap(errs.Conflict, err, "event %s is still being delivered", id)
	}
	if err != nil {
		return OutboxEvent{}, err
	}
	var ev OutboxEvent
	err = unmarshal(attrs, &ev)
	ev.Pending = true
	return ev, err
}

// DeliveryState is where the delivery of one event to one endpoint stands.
type DeliveryState string

// Delivery states; delivered and failed are final for the cycle.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryFailed    DeliveryState = "failed" // every attempt failed; given up
)

// Delivery is the state of one event's delivery to one endpoint.
type Delivery struct {
	EventID    string
	EndpointID string
	Cycle      int
	Attempts   int // attempts claimed so far in this cycle
	State      DeliveryState
	// NextAt is when the next attempt may be claimed; while an attempt is
	// under way it is the end of that claim's lease.
	NextAt time.Time
}

// deliveryItem is Delivery as stored: next_at is a SortableTime string so
// that a condition can compare it with now.
type deliveryItem struct {
	EventID    string        `dynamodbav:"event_id"`
	EndpointID string        `dynamodbav:"endpoint_id"`
	Cycle      int           `dynamodbav:"delivery_cycle"`
	Attempts   int           `dynamodbav:"attempts"`
	State      DeliveryState `dynamodbav:"state"`
	NextAt     string        `dynamodbav:"next_at"`
}

func deliveryKey(org, event, endpoint string) map[string]types.AttributeValue {
	return key(eventPartition(org, event), "DELIVERY#"+endpoint)
}

// Deliveries lists the delivery states of an event, all cycles' latest per
// endpoint: one Query on the event's partition.
func (s *Store) Deliveries(ctx context.Context, org, eventID string) ([]Delivery, error) {
	var out []Delivery
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(eventPartition(org, eventID)), ":sk": str("DELIVERY#"),
		},
		ConsistentRead: aws.Bool(true),
	}, func(item map[string]types.AttributeValue) error {
		var d deliveryItem
		if err := unmarshal(item, &d); err != nil {
			return err
		}
		next, err := time.Parse(SortableTime, d.NextAt)
		if err != nil {
			return errs.Wrap(errs.Internal, err, "store failure")
		}
		out = append(out, Delivery{EventID: d.EventID, EndpointID: d.EndpointID, Cycle: d.Cycle,
			Attempts: d.Attempts, State: d.State, NextAt: next})
		return nil
	})
	return out, err
}

// Claim asks for the right to make one delivery attempt.
type Claim struct {
	EventID, EndpointID string
	Cycle               int
	Attempt             int       // 1 for the first attempt of the cycle
	Now                 time.Time // the attempt must be due at Now
	LeaseUntil          time.Time // when another deliverer may take over
}

// ClaimDelivery takes attempt c.Attempt of an event's delivery to an
// endpoint, with a conditional write: it succeeds for exactly one caller,
// and only when the previous attempt is recorded as failed and the next one
// is due (for the first attempt: nothing of this cycle exists). Conflict
// otherwise. Until c.LeaseUntil nobody else can claim the next attempt; a
// deliverer that dies mid-attempt therefore delays the delivery by the
// lease, and its attempt counts.
func (s *Store) ClaimDelivery(ctx context.Context, org string, c Claim) error {
	if c.Attempt < 1 {
		return errs.E(errs.Internal, "attempt numbers start at 1")
	}
	cond := attrDeliveryCycle + " = :cycle AND " + attrAttempts + " = :prev AND #st = :pending AND " + attrNextAt + " <= :now"
	if c.Attempt == 1 {
		cond = ifItemAbsent + " OR " + attrDeliveryCycle + " < :cycle"
	}
	_, err := s.updateItem(ctx, &dynamodb.UpdateItemInput{
		Key: deliveryKey(org, c.EventID, c.EndpointID),
		UpdateExpression: aws.String("SET " + attrEventID + " = :ev, " + attrEndpointID + " = :ep, " + attrDeliveryCycle + " = :cycle, " + attrAttempts + " = :n, " +
			"#st = :pending, " + attrNextAt + " = :lease, #ttl = :ttl"),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#st": attrState, "#ttl": AttrTTL},
		ExpressionAttributeValues: pruneUnused(cond, map[string]types.AttributeValue{
			":ev": str(c.EventID), ":ep": str(c.EndpointID), ":cycle": num64(int64(c.Cycle)),
			":n": num64(int64(c.Attempt)), ":prev": num64(int64(c.Attempt - 1)), ":pending": str(string(DeliveryPending)),
			":now": str(c.Now.UTC().Format(SortableTime)), ":lease": str(c.LeaseUntil.UTC().Format(SortableTime)),
			":ttl": num64(c.Now.Add(EventRetention).Unix()),
		}, ":ev", ":ep", ":cycle", ":n", ":pending", ":lease", ":ttl"),
	})
	return err
}

// DeliveryAttempt is one entry of the delivery log.
type DeliveryAttempt struct {
	EventID    string        `dynamodbav:"event_id"`
	EventType  string        `dynamodbav:"event_type"`
	EndpointID string        `dynamodbav:"endpoint_id"`
	Cycle      int           `dynamodbav:"delivery_cycle"`
	Attempt    int           `dynamodbav:"attempt"`
	At         time.Time     `dynamodbav:"at"`
	StatusCode int           `dynamodbav:"status_code"` // 0: no response
	Latency    time.Duration `dynamodbav:"latency_ns"`
	Error      string        `dynamodbav:"error,omitempty"`
}

// RecordDeliveryAttempt writes an attempt to the delivery log and moves the
// delivery to state (with the next attempt due at next when it stays
// pending), in one transaction. Conflict when the claim of that attempt was
// lost meanwhile (its lease ran out and another deliverer moved on); then
// nothing is written.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, org string, a DeliveryAttempt, state DeliveryState, next time.Time) error {
	item, err := marshal(a, key(eventPartition(org, a.EventID), fmt.Sprintf("ATTEMPT#%s#%04d#%02d", a.EndpointID, a.Cycle, a.Attempt)))
	if err != nil {
		return err
	}
	item[AttrGSI1PK] = str(attemptsGSI1PK(org, a.EndpointID))
	item[AttrGSI1SK] = str(fmt.Sprintf("%s#%s#%04d#%02d", a.At.UTC().Format(SortableTime), a.EventID, a.Cycle, a.Attempt))
	item[AttrTTL] = num64(a.At.Add(EventRetention).Unix())
	err = s.transact(ctx,
		types.TransactWriteItem{Update: &types.Update{
			Key:                      deliveryKey(org, a.EventID, a.EndpointID),
			UpdateExpression:         aws.String("SET #st = :st, " + attrNextAt + " = :next"),
			ConditionExpression:      aws.String(attrDeliveryCycle + " = :cycle AND " + attrAttempts + " = :n AND #st = :pending"),
			ExpressionAttributeNames: map[string]string{"#st": attrState},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":st": str(string(state)), ":next": str(next.UTC().Format(SortableTime)),
				":cycle": num64(int64(a.Cycle)), ":n": num64(int64(a.Attempt)), ":pending": str(string(DeliveryPending)),
			},
		}},
		types.TransactWriteItem{Put: &types.Put{Item: item, ConditionExpression: aws.String(ifItemAbsent)}},
	)
	if failedAction(err, 0) || failedAction(err, 1) {
		return errs.Wrap(errs.Conflict, err, "the claim on attempt %d of event %s to endpoint %s was lost", a.Attempt, a.EventID, a.EndpointID)
	}
	return err
}

func attemptsGSI1PK(org, endpoint string) string { return orgPK(org) + "#WEBHOOK#" + endpoint + "#LOG" }

// EventAttempts lists the delivery log of one event, every endpoint and
// cycle, most recent first: one Query on the event's partition.
func (s *Store) EventAttempts(ctx context.Context, org, eventID string) ([]DeliveryAttempt, error) {
	var out []DeliveryAttempt
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(eventPartition(org, eventID)), ":sk": str("ATTEMPT#"),
		},
	}, func(item map[string]types.AttributeValue) error {
		var a DeliveryAttempt
		err := unmarshal(item, &a)
		out = append(out, a)
		return err
	})
	slices.SortStableFunc(out, func(a, b DeliveryAttempt) int {
		return cmp.Or(b.At.Compare(a.At), cmp.Compare(b.Attempt, a.Attempt))
	})
	return out, err
}

// EndpointAttempts lists up to limit entries of an endpoint's delivery log,
// most recent first: one Query on GSI1.
func (s *Store) EndpointAttempts(ctx context.Context, org, endpointID string, limit int32) ([]DeliveryAttempt, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(attemptsGSI1PK(org, endpointID))},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	as := make([]DeliveryAttempt, 0, len(out.Items))
	for _, item := range out.Items {
		var a DeliveryAttempt
		if err := unmarshal(item, &a); err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return as, nil
}
