// Package queueendpoints builds the merge-queue endpoint group and
// GitHub's webhook (package wiring says why each group's builder has a
// package).
package queueendpoints

import (
	"context"
	"unsafe"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/queues"
)

var handlersKey = wiring.NewKey("queue-endpoints")

// Handlers are the merge-queue endpoints' handlers, on the merge queue's
// service.
func Handlers(b *wiring.Base) (*queueapi.Handlers, error) {
	p, err := b.Part(handlersKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		d, err := queues.Queues(b)
		if err != nil {
			return nil, err
		}
		return unsafe.Pointer(queueapi.New(b.Store, d, b.Config)), nil
	})
	return (*queueapi.Handlers)(p), err
}

// Group is the merge-queue endpoints.
func Group(_ context.Context, b *wiring.Base) (api.Handlers, error) {
	h, err := Handlers(b)
	if err != nil {
		return nil, err
	}
	return h.Endpoints(), nil
}
