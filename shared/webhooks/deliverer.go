package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// Store is what the Deliverer needs of the store.
type Store interface {
	WebhookEndpoints(ctx context.Context, org string) ([]store.WebhookEndpoint, error)
	DueEvents(ctx context.Context, org string, now time.Time, limit int32, after string) ([]store.OutboxEvent, string, error)
	Deliveries(ctx context.Context, org, eventID string) ([]store.Delivery, error)
	ClaimDelivery(ctx context.Context, org string, c store.Claim) error
	RecordDeliveryAttempt(ctx context.Context, org string, a store.DeliveryAttempt, state store.DeliveryState, next time.Time) error
	RescheduleEvent(ctx context.Context, org, id string, cycle int, due time.Time) error
	FinishEvent(ctx context.Context, org, id string, cycle int) error
	ListOrgs(ctx context.Context) ([]string, error)
}

var _ Store = (*store.Store)(nil)

// leaseMargin is added to the send timeout for a claim's lease: the time
// after which a deliverer that claimed an attempt and went silent is
// presumed dead, and the next attempt may be claimed by another.
const leaseMargin = time.Minute

// Deliverer drains an organization's outbox into its endpoints. It keeps
// nothing between calls: what was sent, what is due and who is sending it
// live in the store, so a crash only delays delivery, and several
// deliverers may run at once (a conditional claim gives each attempt to
// exactly one of them).
type Deliverer struct {
	Store Store
	// Sender sends the attempts; nil is a Sender with its defaults.
	Sender *Sender
	// Now is the clock that decides what is due; nil is time.Now.
	Now func() time.Time
	// Workers is how many events are delivered at once; 0 means 4.
	Workers int
	// Batch is how many due events are read per query; 0 means 100.
	Batch int32
	// Log receives one line per failed store call; nil discards.
	Log *slog.Logger
}

// Report counts what one Run did.
type Report struct {
	Events    int // due events looked at
	Attempts  int // attempts sent
	Delivered int // attempts acknowledged
	GaveUp    int // deliveries given up after their last attempt
	Finished  int // events taken out of the outbox
}

func (r *Report) add(o Report) {
	r.Events += o.Events
	r.Attempts += o.Attempts
	r.Delivered += o.Delivered
	r.GaveUp += o.GaveUp
	r.Finished += o.Finished
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Run delivers every event of org that is due now, sending the attempts
// that are due, and returns what it did. A store failure on one event does
// not stop the others; the errors are returned joined, and what failed is
// retried on a later Run.
func (d *Deliverer) Run(ctx context.Context, org string) (Report, error) {
	eps, err := d.Store.WebhookEndpoints(ctx, org)
	if err != nil {
		return Report{}, err
	}
	workers, batch := d.Workers, d.Batch
	if workers <= 0 {
		workers = 4
	}
	if batch <= 0 {
		batch = 100
	}
	var (
		mu   sync.Mutex
		rep  Report
		errl []error
		wg   sync.WaitGroup
	)
	work := make(chan store.OutboxEvent)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range work {
				r, err := d.deliver(ctx, org, eps, ev)
				mu.Lock()
				rep.add(r)
				if err != nil {
					errl = append(errl, err)
				}
				mu.Unlock()
			}
		}()
	}
	// The due time is fixed for the Run: events rescheduled during it do
	// not come round again.
	now, cursor := d.now(), ""
	for {
		evs, next, err := d.Store.DueEvents(ctx, org, now, batch, cursor)
		if err != nil {
			errl = append(errl, err)
			break
		}
		for _, ev := range evs {
			work <- ev
		}
		if cursor = next; cursor == "" || ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	return rep, errors.Join(errl...)
}

// deliver makes the due attempts of one event and reschedules or finishes it.
func (d *Deliverer) deliver(ctx context.Context, org string, eps []store.WebhookEndpoint, ev store.OutboxEvent) (Report, error) {
	rep := Report{Events: 1}
	states, err := d.Store.Deliveries(ctx, org, ev.ID)
	if err != nil {
		return rep, err
	}
	byEndpoint := map[string]store.Delivery{}
	for _, st := range states {
		if st.Cycle == ev.Cycle { // an older cycle's state is no state
			byEndpoint[st.EndpointID] = st
		}
	}
	sender := d.Sender
	if sender == nil {
		sender = &Sender{}
	}
	lease := sender.timeout() + leaseMargin
	var due time.Time // earliest next attempt of the endpoints still pending
	later := func(t time.Time) {
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	for _, ep := range eps {
		if !ep.Receives(ev.Event) {
			continue
		}
		st, seen := byEndpoint[ep.ID]
		if seen && st.State != store.DeliveryPending {
			continue // delivered or given up
		}
		now := d.now()
		if seen && st.NextAt.After(now) {
			later(st.NextAt)
			continue
		}
		attempt := st.Attempts + 1 // 1 when unseen
		err := d.Store.ClaimDelivery(ctx, org, store.Claim{
			EventID: ev.ID, EndpointID: ep.ID, Cycle: ev.Cycle, Attempt: attempt, Now: now, LeaseUntil: now.Add(lease),
		})
		if errs.Is(err, errs.Conflict) { // another deliverer has it
			later(now.Add(lease))
			continue
		}
		if err != nil {
			return rep, err
		}
		res := sender.Send(ctx, ep.URL, ep.Secrets(now), ev.ID, []byte(ev.Payload))
		rep.Attempts++
		// Schedule on the Deliverer's clock, which decides what is due; the
		// Sender's clock only stamps the message.
		done := d.now()
		state, next := store.DeliveryDelivered, done
		if res.Delivered() {
			rep.Delivered++
		} else if n, ok := NextAttempt(attempt, done); ok {
			state, next = store.DeliveryPending, n
			later(n)
		} else {
			state = store.DeliveryFailed
			rep.GaveUp++
		}
		err = d.Store.RecordDeliveryAttempt(ctx, org, store.DeliveryAttempt{
			EventID: ev.ID, EventType: ev.Type, EndpointID: ep.ID, Cycle: ev.Cycle, Attempt: attempt,
			At: now, StatusCode: res.StatusCode, Latency: res.Latency, Error: res.Err,
		}, state, next)
		if err != nil {
			// The claim stays until its lease ends; the next attempt
			// follows then. At least once: the receiver may see it twice.
			d.log().Warn("webhook attempt not recorded", "org", org, "event", ev.ID, "endpoint", ep.ID, "attempt", attempt, "err", err)
			later(now.Add(lease))
			if !errs.Is(err, errs.Conflict) {
				return rep, err
			}
		}
	}
	if due.IsZero() {
		err = d.Store.FinishEvent(ctx, org, ev.ID, ev.Cycle)
		if err == nil {
			rep.Finished++
		}
	} else {
		err = d.Store.RescheduleEvent(ctx, org, ev.ID, ev.Cycle, due)
	}
	if errs.Is(err, errs.Conflict) { // finished or replayed meanwhile
		err = nil
	}
	return rep, err
}
