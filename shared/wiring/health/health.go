// Package health builds the test-health service (package wiring says why
// each service's builders have a package).
package health

import (
	"context"
	"unsafe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/queues"
)

var (
	healthKey = wiring.NewKey("health")
	checksKey = wiring.NewKey("check-runs")
)

// Health is the test-health service, reading bundles from wiring.Bundles.
func Health(b *wiring.Base) (*healthsvc.Service, error) {
	p, err := b.Part(healthKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		bundles, err := wiring.Bundles(b)
		if err != nil {
			return nil, err
		}
		v := healthview.Viewer{PublicAppURL: b.Config.PublicAppURL}
		return unsafe.Pointer(healthsvc.New(b.Store, bundles, v, b.Now, b.NewID, b.Log)), nil
	})
	return (*healthsvc.Service)(p), err
}

// Ingesting is Health posting each pull request commit's check run as
// its uploads are ingested, through the GitHub of queues.GitHub when it
// has check runs (not without credentials): what ingests needs it, what
// only reads does not link it.
func Ingesting(b *wiring.Base) (*healthsvc.Service, error) {
	h, err := Health(b)
	if err != nil {
		return nil, err
	}
	_, err = b.Part(checksKey, func(b *wiring.Base) (unsafe.Pointer, error) {
		gh, err := queues.GitHub(b)
		if err != nil {
			return nil, err
		}
		if c, ok := gh.(healthsvc.CheckRuns); ok {
			h.Checks = healthsvc.NewChecks(c, config.EnterpriseHost(b.Config.GitHubAPIURL))
		}
		return unsafe.Pointer(h.Checks), nil
	})
	return h, err
}

// IngestBundle is the ingest-bundle function's handler: S3 announces the
// bundles landed in the bucket.
func IngestBundle(_ context.Context, b *wiring.Base) (func(context.Context, events.S3Event) error, error) {
	h, err := Ingesting(b)
	if err != nil {
		return nil, err
	}
	return h.IngestS3, nil
}
