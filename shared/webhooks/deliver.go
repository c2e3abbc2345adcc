package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/store"
)

// orgWorkers is how many organizations' outboxes are drained at once; each
// drain sends several events at once itself.
const orgWorkers = 4

// DeliverAll drains the webhook outbox of every organization (the
// scheduled function and the local server's ticker). Delivery state lives
// in the store, so this is safe beside the stream function and other copies.
func (d *Deliverer) DeliverAll(ctx context.Context) error {
	orgs, err := d.Store.ListOrgs(ctx)
	if err != nil {
		d.log().ErrorContext(ctx, "webhooks: organizations not listed", "error", err.Error())
		return err
	}
	return d.Deliver(ctx, orgs...)
}

// Deliver drains the webhook outboxes of orgs: every due attempt is sent
// and recorded, and what failed is rescheduled (contract 4). One
// organization's store failure does not stop the others; the errors are
// returned joined and logged, and a later pass retries.
func (d *Deliverer) Deliver(ctx context.Context, orgs ...string) error {
	var (
		mu   sync.Mutex
		errl []error
		wg   sync.WaitGroup
	)
	work := make(chan string)
	for range min(orgWorkers, len(orgs)) {
		wg.Go(func() {
			for org := range work {
				rep, err := d.Run(ctx, org)
				if rep.Attempts > 0 || rep.Finished > 0 {
					d.log().InfoContext(ctx, "webhooks delivered", "org", org, "events", rep.Events, "attempts", rep.Attempts,
						"delivered", rep.Delivered, "gave_up", rep.GaveUp, "finished", rep.Finished)
				}
				if err != nil {
					d.log().ErrorContext(ctx, "webhooks: delivery pass failed", "org", org, "error", err.Error())
					mu.Lock()
					errl = append(errl, fmt.Errorf("webhooks of %s: %w", org, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, org := range orgs {
		work <- org
	}
	close(work)
	wg.Wait()
	return errors.Join(errl...)
}

// DeliverStream is the deliver-webhooks function: the table's stream,
// filtered to outbox event inserts, names the organizations that have
// something new to send, and their outboxes are drained at once rather
// than at the next tick.
//
// It never fails the batch. A failed batch would be retried by Lambda and
// hold back the shard behind it, while the scheduled function drains every
// outbox within a minute anyway: a failure here only delays delivery, and
// it is logged by Deliver.
func (d *Deliverer) DeliverStream(ctx context.Context, ev events.DynamoDBEvent) error {
	_ = d.Deliver(ctx, StreamOrgs(ev)...)
	return nil
}

// StreamOrgs lists, once each and in order of first appearance, the
// organizations of the outbox events inserted in a stream batch. Records
// of other items or other changes are skipped: the event source's filter
// lets only event inserts through when deployed, and this holds with any
// filter.
func StreamOrgs(ev events.DynamoDBEvent) []string {
	var orgs []string
	seen := map[string]bool{}
	for _, rec := range ev.Records {
		org, ok := store.InsertedEventOrg(rec)
		if ok && !seen[org] {
			seen[org] = true
			orgs = append(orgs, org)
		}
	}
	return orgs
}

// NewDeliverer is the deliverer of a function or the local server: st's
// outboxes on the clock now, logged to log, sent through a client that
// dials through guard. The sender keeps the real clock: receivers check
// webhook-timestamp against theirs.
func NewDeliverer(st Store, now func() time.Time, log *slog.Logger, guard Guard) *Deliverer {
	return &Deliverer{Store: st, Now: now, Log: log, Sender: &Sender{Client: NewClient(guard)}}
}
