package store_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

const secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	now := t0
	s := storetest.New(t, func() time.Time { return now })
	ctx := context.Background()
	mustOrg(t, s, "acme")
	mustOrg(t, s, "other")

	ep := store.WebhookEndpoint{ID: "ep_1", URL: "https://hooks.example.com/in", Secret: secretA, EventTypes: []string{"pull_request.merged"}}
	got, err := s.AddWebhookEndpoint(ctx, "acme", ep)
	if err != nil {
		t.Fatal(err)
	}
	want := ep
	want.Org, want.CreatedAt = "acme", t0
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("added (-got +want):\n%s", d)
	}
	if _, err := s.AddWebhookEndpoint(ctx, "acme", ep); !errs.Is(err, errs.Conflict) {
		t.Errorf("same id again: got %v, want conflict", err)
	}
	if _, err := s.AddWebhookEndpoint(ctx, "ghost", ep); !errs.Is(err, errs.NotFound) {
		t.Errorf("absent org: got %v, want not found", err)
	}
	for name, bad := range map[string]store.WebhookEndpoint{
		"empty id":     {URL: ep.URL, Secret: secretA},
		"id with #":    {ID: "a#b", URL: ep.URL, Secret: secretA},
		"empty url":    {ID: "ep_2", Secret: secretA},
		"plain secret": {ID: "ep_2", URL: ep.URL, Secret: "hunter2"},
	} {
		if _, err := s.AddWebhookEndpoint(ctx, "acme", bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: got %v, want invalid", name, err)
		}
	}
	all := store.WebhookEndpoint{ID: "ep_0", URL: "http://127.0.0.1:9/x", Secret: secretA}
	if _, err := s.AddWebhookEndpoint(ctx, "acme", all); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddWebhookEndpoint(ctx, "other", store.WebhookEndpoint{ID: "ep_9", URL: "http://x", Secret: secretA}); err != nil {
		t.Fatal(err)
	}
	list, err := s.WebhookEndpoints(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	if d := cmp.Diff(ids, []string{"ep_0", "ep_1"}); d != "" {
		t.Errorf("list (-got +want):\n%s", d)
	}
	if !list[0].Subscribed("anything") || list[1].Subscribed("pull_request.queued") || !list[1].Subscribed("pull_request.merged") {
		t.Errorf("filters: %+v", list)
	}

	// Rotation: both secrets sign during the grace period, then only the new.
	const secretB = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	rot, err := s.RotateWebhookSecret(ctx, "acme", "ep_1", secretB)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rot.Secrets(t0.Add(time.Hour)), []string{secretB, secretA}); d != "" {
		t.Errorf("secrets in grace (-got +want):\n%s", d)
	}
	if d := cmp.Diff(rot.Secrets(t0.Add(store.SecretRotationGrace)), []string{secretB}); d != "" {
		t.Errorf("secrets after grace (-got +want):\n%s", d)
	}
	if _, err := s.RotateWebhookSecret(ctx, "other", "ep_1", secretB); !errs.Is(err, errs.NotFound) {
		t.Errorf("rotate another org's endpoint: %v", err)
	}

	if err := s.RemoveWebhookEndpoint(ctx, "acme", "ep_1"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveWebhookEndpoint(ctx, "acme", "ep_1"); !errs.Is(err, errs.NotFound) {
		t.Errorf("remove twice: %v", err)
	}
	if _, err := s.WebhookEndpoint(ctx, "acme", "ep_1"); !errs.Is(err, errs.NotFound) {
		t.Errorf("get removed: %v", err)
	}
	if _, err := s.WebhookEndpoint(ctx, "acme", "ep_0"); err != nil {
		t.Errorf("get kept: %v", err)
	}
}

func enqueue(t *testing.T, s *store.Store, org, id string, at time.Time) {
	t.Helper()
	ev := store.Event{ID: id, Type: "pull_request.merged", Payload: `{"type":"pull_request.merged"}`, CreatedAt: at}
	if err := s.EnqueueEvent(context.Background(), org, ev); err != nil {
		t.Fatal(err)
	}
}

func dueIDs(t *testing.T, s *store.Store, org string, at time.Time) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		evs, next, err := s.DueEvents(context.Background(), org, at, 1, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			ids = append(ids, ev.ID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
}

func TestOutboxScheduling(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "acme")
	enqueue(t, s, "acme", "evt_a", t0)
	enqueue(t, s, "acme", "evt_b", t0.Add(time.Second))
	enqueue(t, s, "acme", "evt_c", t0.Add(2*time.Second))
	if err := s.EnqueueEvent(ctx, "acme", store.Event{ID: "evt_a", CreatedAt: t0}); !errs.Is(err, errs.Conflict) {
		t.Errorf("same id twice: %v", err)
	}

	// Paged one at a time, earliest due first; not yet due ones left out.
	if d := cmp.Diff(dueIDs(t, s, "acme", t0.Add(time.Second)), []string{"evt_a", "evt_b"}); d != "" {
		t.Errorf("due (-got +want):\n%s", d)
	}
	// A retry in 5 minutes moves evt_a behind the others.
	if err := s.RescheduleEvent(ctx, "acme", "evt_a", 0, t0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(dueIDs(t, s, "acme", t0.Add(time.Minute)), []string{"evt_b", "evt_c"}); d != "" {
		t.Errorf("due after reschedule (-got +want):\n%s", d)
	}
	if d := cmp.Diff(dueIDs(t, s, "acme", t0.Add(5*time.Minute)), []string{"evt_b", "evt_c", "evt_a"}); d != "" {
		t.Errorf("due later (-got +want):\n%s", d)
	}

	// Finishing takes it out of the outbox index, once.
	if err := s.FinishEvent(ctx, "acme", "evt_b", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishEvent(ctx, "acme", "evt_b", 0); !errs.Is(err, errs.Conflict) {
		t.Errorf("finish twice: %v", err)
	}
	if err := s.RescheduleEvent(ctx, "acme", "evt_b", 0, t0); !errs.Is(err, errs.Conflict) {
		t.Errorf("reschedule a finished event: %v", err)
	}
	pending, err := s.PendingEvents(ctx, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].ID != "evt_c" || pending[1].ID != "evt_a" {
		t.Errorf("pending after finish: %+v", pending)
	}
	ev, err := s.OutboxEvent(ctx, "acme", "evt_b")
	if err != nil || ev.Pending || ev.Cycle != 0 || ev.Payload != `{"type":"pull_request.merged"}` {
		t.Errorf("finished event: %+v %v", ev, err)
	}

	// Replay: not while pending; afterwards a new cycle, due now, same id.
	if _, err := s.ReplayEvent(ctx, "acme", "evt_a"); !errs.Is(err, errs.Conflict) {
		t.Errorf("replay a pending event: %v", err)
	}
	if _, err := s.ReplayEvent(ctx, "acme", "evt_zzz"); !errs.Is(err, errs.NotFound) {
		t.Errorf("replay an absent event: %v", err)
	}
	re, err := s.ReplayEvent(ctx, "acme", "evt_b")
	if err != nil || re.ID != "evt_b" || re.Cycle != 1 || !re.Pending {
		t.Fatalf("replay: %+v %v", re, err)
	}
	if err := s.FinishEvent(ctx, "acme", "evt_b", 0); !errs.Is(err, errs.Conflict) {
		t.Errorf("finishing the old cycle must not end the new one: %v", err)
	}
	if d := cmp.Diff(dueIDs(t, s, "acme", t0), []string{"evt_b"}); d != "" {
		t.Errorf("due after replay (-got +want):\n%s", d)
	}
	if err := s.FinishEvent(ctx, "acme", "evt_b", 1); err != nil {
		t.Errorf("finish cycle 1: %v", err)
	}
	if dueIDs(t, s, "other", t0.Add(time.Hour)) != nil {
		t.Errorf("another org sees acme's outbox")
	}
}

func TestDeliveryClaimsAndLog(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "acme")
	enqueue(t, s, "acme", "evt_1", t0)
	lease := t0.Add(time.Minute)
	claim := func(attempt, cycle int, at time.Time) error {
		return s.ClaimDelivery(ctx, "acme", store.Claim{EventID: "evt_1", EndpointID: "ep_1", Cycle: cycle, Attempt: attempt, Now: at, LeaseUntil: at.Add(time.Minute)})
	}
	record := func(attempt, cycle int, at time.Time, code int, st store.DeliveryState, next time.Time) error {
		return s.RecordDeliveryAttempt(ctx, "acme", store.DeliveryAttempt{
			EventID: "evt_1", EventType: "pull_request.merged", EndpointID: "ep_1", Cycle: cycle, Attempt: attempt,
			At: at, StatusCode: code, Latency: 12 * time.Millisecond, Error: "HTTP " + strconv.Itoa(code),
		}, st, next)
	}

	if err := claim(1, 0, t0); err != nil {
		t.Fatal(err)
	}
	if err := claim(1, 0, t0); !errs.Is(err, errs.Conflict) {
		t.Errorf("second claim of attempt 1: %v", err)
	}
	if err := claim(2, 0, lease.Add(-time.Second)); !errs.Is(err, errs.Conflict) {
		t.Errorf("attempt 2 while attempt 1 is under lease: %v", err)
	}
	if err := record(1, 0, t0, 500, store.DeliveryPending, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := record(1, 0, t0, 500, store.DeliveryPending, t0.Add(5*time.Second)); !errs.Is(err, errs.Conflict) {
		t.Errorf("recording attempt 1 twice: %v", err)
	}
	if err := claim(2, 0, t0.Add(4*time.Second)); !errs.Is(err, errs.Conflict) {
		t.Errorf("attempt 2 before it is due: %v", err)
	}
	at2 := t0.Add(5 * time.Second)
	if err := claim(2, 0, at2); err != nil {
		t.Fatal(err)
	}
	if err := record(2, 0, at2, 200, store.DeliveryDelivered, at2); err != nil {
		t.Fatal(err)
	}
	if err := claim(3, 0, t0.Add(time.Hour)); !errs.Is(err, errs.Conflict) {
		t.Errorf("attempt after delivery: %v", err)
	}
	ds, err := s.Deliveries(ctx, "acme", "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	wantD := []store.Delivery{{EventID: "evt_1", EndpointID: "ep_1", Attempts: 2, State: store.DeliveryDelivered, NextAt: at2}}
	if d := cmp.Diff(ds, wantD); d != "" {
		t.Errorf("deliveries (-got +want):\n%s", d)
	}

	// A replayed cycle starts over at attempt 1 despite the old state.
	if err := claim(1, 1, t0.Add(2*time.Hour)); err != nil {
		t.Errorf("attempt 1 of cycle 1: %v", err)
	}
	if err := record(1, 1, t0.Add(2*time.Hour), 204, store.DeliveryDelivered, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	evLog, err := s.EventAttempts(ctx, "acme", "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range evLog {
		got = append(got, fmt.Sprintf("c%d a%d %d %v", a.Cycle, a.Attempt, a.StatusCode, a.At.Sub(t0)))
	}
	want := []string{"c1 a1 204 2h0m0s", "c0 a2 200 5s", "c0 a1 500 0s"}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("event log, recent first (-got +want):\n%s", d)
	}
	epLog, err := s.EndpointAttempts(ctx, "acme", "ep_1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(epLog) != 2 || epLog[0].StatusCode != 204 || epLog[1].StatusCode != 200 || epLog[1].Latency != 12*time.Millisecond || epLog[1].Error != "HTTP 200" {
		t.Errorf("endpoint log, recent first, limit 2: %+v", epLog)
	}

	// Log items expire 30 days after the attempt.
	db, table := storetest.Client(t), s.Table()
	out, err := db.Query(ctx, &dynamodb.QueryInput{
		TableName: &table, KeyConditionExpression: strPtr("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: "ORG#acme#EVENT#evt_1"}, ":sk": &types.AttributeValueMemberS{Value: "ATTEMPT#"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range out.Items {
		ttl, _ := item[store.AttrTTL].(*types.AttributeValueMemberN)
		at, _ := item["at"].(*types.AttributeValueMemberS)
		when, _ := time.Parse(time.RFC3339Nano, at.Value)
		if ttl == nil || ttl.Value != strconv.FormatInt(when.Add(store.EventRetention).Unix(), 10) {
			t.Errorf("attempt item ttl %v for attempt at %v", ttl, when)
		}
	}
}

func strPtr(s string) *string { return &s }

// TestDeliveryClaimIsExclusive races deliverers for the same attempt: one
// wins, the others get Conflict, so nobody double-sends.
func TestDeliveryClaimIsExclusive(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	mustOrg(t, s, "acme")
	enqueue(t, s, "acme", "evt_1", t0)
	const racers = 8
	var wg sync.WaitGroup
	results := make(chan error, racers)
	for range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- s.ClaimDelivery(context.Background(), "acme", store.Claim{
				EventID: "evt_1", EndpointID: "ep_1", Attempt: 1, Now: t0, LeaseUntil: t0.Add(time.Minute),
			})
		}()
	}
	wg.Wait()
	close(results)
	won, lost := 0, 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case errs.Is(err, errs.Conflict):
			lost++
		default:
			t.Errorf("claim: %v", err)
		}
	}
	if won != 1 || lost != racers-1 {
		t.Errorf("won %d, lost %d; want 1 and %d", won, lost, racers-1)
	}
}
