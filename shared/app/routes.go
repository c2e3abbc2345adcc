package app

import (
	"net/http"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/flakyapi"
)

// routes is the route table: each endpoint, its method and path below /v1,
// and the function (folder of functions/) that serves it. template.yaml
// declares the same; a test keeps the three in step.
func (a *App) routes() []api.Endpoint {
	flaky := &flakyapi.Handlers{
		Store: a.Store, Now: a.Now, NewID: a.NewID,
		Viewer: flakyapi.Viewer{PublicAppURL: a.Config.PublicAppURL},
	}
	return []api.Endpoint{
		{Name: "status", Method: http.MethodGet, Path: "/status", Public: true, Handler: a.status()},
		{Name: "get-test-details", Method: http.MethodPost, Path: "/flaky-tests/get-test-details", Handler: flaky.GetTestDetails()},
		{Name: "link-ticket-to-test-case", Method: http.MethodPost, Path: "/flaky-tests/link-ticket-to-test-case", Handler: flaky.LinkTicket()},
	}
}

// status answers health checks: up while the table answers a read.
func (a *App) status() http.Handler {
	type overall struct {
		Type string `json:"type"`
	}
	type body struct {
		OverallStatus overall `json:"overallStatus"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.Store.Ping(r.Context()); err != nil {
			a.Log.WarnContext(r.Context(), "status: table unreachable", "error", err.Error())
			api.WriteJSON(w, r, http.StatusServiceUnavailable, body{overall{"impacted"}})
			return
		}
		api.WriteJSON(w, r, http.StatusOK, body{overall{"up"}})
	})
}
