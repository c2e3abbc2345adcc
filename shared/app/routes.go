package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/docs"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/testsapi"
	"github.com/mainguard/mainguard/shared/testview"
	"github.com/mainguard/mainguard/shared/uploadapi"
)

// routes is the route table: each endpoint, its method and path below /v1,
// and the function (folder of functions/) that serves it. template.yaml
// declares the same; a test keeps the three in step.
func (a *App) routes() []api.Endpoint {
	tests := &testsapi.Handlers{
		Store: a.Store, Now: a.Now, NewID: a.NewID,
		Viewer: testview.Viewer{PublicAppURL: a.Config.PublicAppURL},
		Secret: a.secret("page-token"),
	}
	uploads := &uploadapi.Handlers{Store: a.Store, Now: a.Now, Uploads: a.Uploads}
	eps := []api.Endpoint{
		{Name: "status", Method: http.MethodGet, Path: "/status", Public: true, Handler: a.status()},
		{Name: "openapi", Method: http.MethodGet, Path: "/openapi.yaml", Public: true, Handler: openAPI()},
		{Name: "get-test-details", Method: http.MethodPost, Path: "/flaky-tests/get-test-details", Handler: tests.GetTestDetails()},
		{Name: "link-ticket-to-test-case", Method: http.MethodPost, Path: "/flaky-tests/link-ticket-to-test-case", Handler: tests.LinkTicket()},
		{Name: "list-quarantined-tests", Method: http.MethodPost, Path: "/flaky-tests/list-quarantined-tests", Handler: tests.ListQuarantined()},
		{Name: "list-unhealthy-tests", Method: http.MethodPost, Path: "/flaky-tests/list-unhealthy-tests", Handler: tests.ListUnhealthy()},
		{Name: "list-failing-tests", Method: http.MethodPost, Path: "/flaky-tests/list-failing-tests", Handler: tests.ListFailing()},
		{Name: "get-quarantine-config", Method: http.MethodPost, Path: "/metrics/getQuarantineConfig", Handler: uploads.GetQuarantineConfig()},
		{Name: "create-bundle-upload", Method: http.MethodPost, Path: "/metrics/createBundleUpload", Handler: uploads.CreateBundleUpload()},
	}
	if local, ok := a.Uploads.(*uploadapi.LocalUploads); ok {
		eps = append(eps, api.Endpoint{Name: "put-bundle", Method: http.MethodPut, Path: uploadapi.PutPath, Public: true, LocalOnly: true, Handler: local.Put()})
	}
	eps = append(eps, a.MergeQueue.Endpoints()...)
	eps = append(eps, (&metricsapi.Handler{Store: a.Store, Now: a.Now}).Endpoint())
	return eps
}

// EventFunctions are the functions that no HTTP route reaches: each folder
// of functions/ and the kind of event that invokes it (template.yaml).
var EventFunctions = map[string]string{
	"ingest-bundle": "S3",       // a bundle landed in the bucket
	"scheduler":     "Schedule", // every minute
	// an outbox event was written (the table's stream, filtered to event
	// inserts); the scheduler delivers too, so this only makes it sooner
	"deliver-webhooks": "DynamoDB",
}

// EventFunction is the handler of an event-driven function.
func (a *App) EventFunction(name string) (any, bool) {
	switch name {
	case "ingest-bundle":
		return a.IngestS3, true
	case "scheduler":
		return a.Tick, true
	case "deliver-webhooks":
		return a.DeliverStream, true
	}
	return nil, false
}

// IngestS3 ingests the bundles an S3 object-created event names. An error
// makes Lambda retry the event, which is safe: ingestion is idempotent.
func (a *App) IngestS3(ctx context.Context, ev events.S3Event) error {
	for _, rec := range ev.Records {
		key, err := url.QueryUnescape(rec.S3.Object.Key) // S3 event keys are URL-encoded
		if err != nil {
			key = rec.S3.Object.Key
		}
		org, id, err := blobs.ParseKey(key)
		if err != nil {
			a.Log.WarnContext(ctx, "ingest: not a bundle key", "key", key)
			continue
		}
		if err := a.Health.Ingest(ctx, org, id); err != nil {
			if errs.Is(err, errs.NotFound) { // an object with no upload record
				a.Log.WarnContext(ctx, "ingest: no such upload", "org", org, "upload", id)
				continue
			}
			return err
		}
	}
	return nil
}

// Tick is one run of the scheduled function: test health's time-based
// reclassification (the merge queue joins it), then webhook delivery for
// every organization, so that events written by a change whose process
// died before delivering them go out at the next tick at the latest.
func (a *App) Tick(ctx context.Context) error {
	n, err := a.Health.Sweep(ctx)
	if err != nil {
		a.Log.ErrorContext(ctx, "tick failed", "reclassified", n, "error", err.Error())
	}
	// Merge queues before delivery, so the events of this tick's steps go
	// out in it.
	if _, qerr := a.MergeQueue.Driver.Tick(ctx); qerr != nil {
		a.Log.ErrorContext(ctx, "tick: merge queues failed", "error", qerr.Error())
		err = errors.Join(err, qerr)
	}
	return errors.Join(err, a.DeliverAll(ctx))
}

// status answers health checks: up while the table answers a read.
// openAPI answers the API's OpenAPI document (docs/openapi.yaml).
func openAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(docs.OpenAPI)
	})
}

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
