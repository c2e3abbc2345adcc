package wiring

import (
	"context"
	"unsafe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/docs"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
)

var bundlesKey = NewKey("bundles")

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

// StreamHandler is the handler of a function the table's stream invokes.
type StreamHandler = func(context.Context, events.DynamoDBEvent) error

// OpenAPI is the openapi function's group: the API's OpenAPI document.
func OpenAPI(context.Context, *Base) (api.Handlers, error) {
	return api.Handlers{"openapi": docs.Handler()}, nil
}
