package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/mainguard/mainguard/shared/store"
)

// NewEndpoint checks url with g and returns an endpoint to store with
// store.AddWebhookEndpoint: a fresh id ("ep_" and 16 hex digits) and
// secret, and the event-type filter (empty: every type).
func NewEndpoint(ctx context.Context, g Guard, url string, eventTypes []string) (store.WebhookEndpoint, error) {
	if err := g.CheckURL(ctx, url); err != nil {
		return store.WebhookEndpoint{}, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return store.WebhookEndpoint{ID: "ep_" + hex.EncodeToString(b[:]), URL: url, Secret: NewSecret(), EventTypes: eventTypes}, nil
}
