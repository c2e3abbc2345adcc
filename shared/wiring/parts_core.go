package wiring

import (
	"context"
	"unsafe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/docs"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/webhooks"
)

var (
	bundlesKey  = NewKey("bundles")
	webhooksKey = NewKey("webhooks")
)

// Bundles is where upload bundles are kept: the configured S3 bucket, or
// without one the local server's folder (config BundleDir).
func Bundles(b *Base) (blobs.Store, error) {
	p, err := b.Part(bundlesKey, func(b *Base) (unsafe.Pointer, error) {
		var s blobs.Store = blobs.Dir{Root: b.Config.BundleDir}
		if b.Config.BundleBucket != "" {
			awsCfg := b.opt.AWS
			if awsCfg == nil {
				c, err := AWSConfig(b.Config.Region, b.Config.S3Endpoint)
				if err != nil {
					return nil, err
				}
				awsCfg = &c
			}
			s = blobs.NewS3(*awsCfg, b.Config.BundleBucket, b.Config.S3Endpoint)
		}
		return unsafe.Pointer(&s), nil
	})
	if err != nil {
		return nil, err
	}
	return *(*blobs.Store)(p), nil
}

// WebhookGuard is the check on the addresses of webhook endpoints that
// the deliverer dials through, and that the administration program
// applies when adding one.
func WebhookGuard(b *Base) webhooks.Guard {
	return webhooks.Guard{AllowLoopback: b.opt.LoopbackWebhooks, AllowPrivate: b.Config.WebhookInternalNetworks}
}

// Webhooks is the deliverer draining the organizations' outboxes into
// their endpoints (the deliver-webhooks function, the scheduler).
func Webhooks(b *Base) (*webhooks.Deliverer, error) {
	p, err := b.Part(webhooksKey, func(b *Base) (unsafe.Pointer, error) {
		return unsafe.Pointer(webhooks.NewDeliverer(b.Store, b.Now, b.Log, WebhookGuard(b))), nil
	})
	return (*webhooks.Deliverer)(p), err
}

// StreamHandler is the handler of a function the table's stream invokes.
type StreamHandler = func(context.Context, events.DynamoDBEvent) error

// DeliverWebhooks is the deliver-webhooks function's handler: the table's
// stream announces outbox events.
func DeliverWebhooks(_ context.Context, b *Base) (StreamHandler, error) {
	d, err := Webhooks(b)
	if err != nil {
		return nil, err
	}
	return d.DeliverStream, nil
}

// OpenAPI is the openapi function's group: the API's OpenAPI document.
func OpenAPI(context.Context, *Base) (api.Handlers, error) {
	return api.Handlers{"openapi": docs.Handler()}, nil
}
