// Package delivery builds the webhook deliverer (package wiring says why
// each service's builders have a package).
package delivery

import (
	"context"
	"unsafe"

	"github.com/mainguard/mainguard/shared/webhooks"
	"github.com/mainguard/mainguard/shared/wiring"
)

var delivererKey = wiring.NewKey("webhooks")

// Guard is the check on the addresses of webhook endpoints that
// the deliverer dials through, and that the administration program
// applies when adding one.
func Guard(b *wiring.Base) webhooks.Guard {
	return webhooks.Guard{AllowLoopback: b.LoopbackWebhooks(), AllowPrivate: b.Config.WebhookInternalNetworks}
}

// Deliverer is the deliverer draining the organizations' outboxes into
// their endpoints (the deliver-webhooks function, the scheduler).
func Deliverer(b *wiring.Base) (*webhooks.Deliverer, error) {
	p, err := b.Part(delivererKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		return unsafe.Pointer(webhooks.NewDeliverer(b.Store, b.Now, b.Log, Guard(b))), nil
	})
	return (*webhooks.Deliverer)(p), err
}

// DeliverWebhooks is the deliver-webhooks function's handler: the table's
// stream announces outbox events.
func DeliverWebhooks(_ context.Context, b *wiring.Base) (wiring.StreamHandler, error) {
	d, err := Deliverer(b)
	if err != nil {
		return nil, err
	}
	return d.DeliverStream, nil
}
