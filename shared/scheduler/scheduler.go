// Package scheduler is the scheduled function's work, a service like the
// others (its builder is wiring/tick's), which the local server's ticker
// does too: test health's time-based reclassification, a
// step of every merge queue, and webhook delivery for every organization.
package scheduler

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// resumePerTick bounds the uploads one tick resumes per organization: a
// resumed ingest may take minutes, and the tick has queues to step.
const resumePerTick = 4

// Scheduler is what one tick runs. Where its test-health service has the
// bundle store, a tick also resumes the uploads no ingest will finish:
// deployed by announcing their bundles again to the ingest function, on
// the local server by ingesting them.
type Scheduler struct {
	Health   *healthsvc.Service
	Queues   *queuesvc.Service
	Webhooks *webhooks.Deliverer
	Log      *slog.Logger
}

// New is the scheduler of these services.
func New(health *healthsvc.Service, queues *queuesvc.Service, deliverer *webhooks.Deliverer, log *slog.Logger) *Scheduler {
	return &Scheduler{Health: health, Queues: queues, Webhooks: deliverer, Log: log}
}

// Tick is one run: unfinished uploads, reclassification, then the merge queues, then
// delivery, so that the events of this tick's steps go out in it, and
// events written by a change whose process died before delivering them go
// out at the next tick at the latest.
func (s *Scheduler) Tick(ctx context.Context) error {
	var err error
	if s.Health.Blobs != nil {
		// Uploads no ingest will finish: resumed, or expired unused.
		if n, rerr := s.Health.ResumeUploads(ctx, resumePerTick); rerr != nil {
			s.Log.ErrorContext(ctx, "tick: uploads not resumed", "resumed", n, "error", rerr.Error())
			err = rerr
		}
	}
	n, serr := s.Health.Sweep(ctx)
	if serr != nil {
		s.Log.ErrorContext(ctx, "tick failed", "reclassified", n, "error", serr.Error())
		err = errors.Join(err, serr)
	}
	if _, qerr := s.Queues.Tick(ctx); qerr != nil {
		s.Log.ErrorContext(ctx, "tick: merge queues failed", "error", qerr.Error())
		err = errors.Join(err, qerr)
	}
	return errors.Join(err, s.Webhooks.DeliverAll(ctx))
}
