// Package tick builds the scheduler, the scheduled function's work
// (package wiring says why each service's builders have a package).
package tick

import (
	"context"
	"unsafe"

	"github.com/mainguard/mainguard/shared/scheduler"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/delivery"
	"github.com/mainguard/mainguard/shared/wiring/health"
	"github.com/mainguard/mainguard/shared/wiring/queues"
)

var schedulerKey = wiring.NewKey("scheduler")

// Scheduler is what one tick runs: test health's sweep and resumed
// uploads, a step of every merge queue, webhook delivery.
func Scheduler(b *wiring.Base) (*scheduler.Scheduler, error) {
	p, err := b.Part(schedulerKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		h, err := health.Health(b)
		if err != nil {
			return nil, err
		}
		q, err := queues.Queues(b)
		if err != nil {
			return nil, err
		}
		d, err := delivery.Deliverer(b)
		if err != nil {
			return nil, err
		}
		return unsafe.Pointer(scheduler.New(h, q, d, b.Log)), nil
	})
	return (*scheduler.Scheduler)(p), err
}

// Function is the scheduler function's handler.
func Function(_ context.Context, b *wiring.Base) (func(context.Context) error, error) {
	s, err := Scheduler(b)
	if err != nil {
		return nil, err
	}
	return s.Tick, nil
}
