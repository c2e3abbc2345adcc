package wiring

import (
	"context"
	"net/http"

	"github.com/mainguard/mainguard/shared/api"
)

// Status is the status function's group: GET /status answers up while the
// table answers a read, and 503 "impacted" when it does not.
func Status(_ context.Context, b *Base) (api.Handlers, error) {
	type overall struct {
		Type string `json:"type"`
	}
	type body struct {
		OverallStatus overall `json:"overallStatus"`
	}
	return api.Handlers{"status": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := b.Store.Ping(r.Context()); err != nil {
			b.Log.WarnContext(r.Context(), "status: table unreachable", "error", err.Error())
			api.WriteJSON(w, r, http.StatusServiceUnavailable, body{overall{"impacted"}})
			return
		}
		api.WriteJSON(w, r, http.StatusOK, body{overall{"up"}})
	})}, nil
}
