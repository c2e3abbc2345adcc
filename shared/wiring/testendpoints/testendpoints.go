// Package testendpoints builds the /flaky-tests endpoint group (package
// wiring says why each group's builder has a package).
package testendpoints

import (
	"context"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/testsapi"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/health"
)

// Group is the test endpoints, on the test-health service.
func Group(_ context.Context, b *wiring.Base) (api.Handlers, error) {
	h, err := health.Health(b)
	if err != nil {
		return nil, err
	}
	return testsapi.New(h, b.Config.Secrets).Endpoints(), nil
}
