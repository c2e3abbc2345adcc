// Package metricendpoints builds the merge queue's metrics endpoint
// (package wiring says why each group's builder has a package: this one
// links Prometheus's encoder, which no other function needs).
package metricendpoints

import (
	"context"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/wiring"
)

// Group is the metrics endpoint.
func Group(_ context.Context, b *wiring.Base) (api.Handlers, error) {
	return (&metricsapi.Handler{Store: b.Store, Now: b.Now}).Endpoints(), nil
}
