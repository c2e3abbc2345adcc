package api

import "net/http"

// Route is one HTTP endpoint: the function that serves it (its folder of
// functions/), its method and path below /v1, and whether it is public
// (no x-api-token), else the scope a token needs to call it. Every route
// that is not public names its scope (a test holds it so): a token kept in
// CI with the upload scope reaches the uploader's endpoints and no other.
type Route struct {
	Name   string
	Method string
	Path   string
	Public bool
	Scope  Scope
}

// Routes is the route table: every HTTP function of the service.
// template.yaml declares the same, the OpenAPI document describes them, and
// tests keep the three in step; the local server serves exactly these.
var Routes = []Route{
	{Name: "status", Method: http.MethodGet, Path: "/status", Public: true},
	{Name: "openapi", Method: http.MethodGet, Path: "/openapi.yaml", Public: true},

	{Name: "get-test-details", Method: http.MethodPost, Path: "/flaky-tests/get-test-details", Scope: ScopeRead},
	{Name: "link-ticket-to-test-case", Method: http.MethodPost, Path: "/flaky-tests/link-ticket-to-test-case", Scope: ScopeAdmin},
	{Name: "list-quarantined-tests", Method: http.MethodPost, Path: "/flaky-tests/list-quarantined-tests", Scope: ScopeRead},
	{Name: "list-unhealthy-tests", Method: http.MethodPost, Path: "/flaky-tests/list-unhealthy-tests", Scope: ScopeRead},
	{Name: "list-failing-tests", Method: http.MethodPost, Path: "/flaky-tests/list-failing-tests", Scope: ScopeRead},
	{Name: "label-failures", Method: http.MethodPost, Path: "/flaky-tests/label-failures", Scope: ScopeUpload},

	{Name: "get-quarantine-config", Method: http.MethodPost, Path: "/metrics/getQuarantineConfig", Scope: ScopeUpload},
	{Name: "create-bundle-upload", Method: http.MethodPost, Path: "/metrics/createBundleUpload", Scope: ScopeUpload},

	{Name: "create-queue", Method: http.MethodPost, Path: "/createQueue", Scope: ScopeQueue},
	{Name: "get-queue", Method: http.MethodPost, Path: "/getQueue", Scope: ScopeRead},
	{Name: "update-queue", Method: http.MethodPost, Path: "/updateQueue", Scope: ScopeQueue},
	{Name: "delete-queue", Method: http.MethodPost, Path: "/deleteQueue", Scope: ScopeQueue},
	{Name: "submit-pull-request", Method: http.MethodPost, Path: "/submitPullRequest", Scope: ScopeQueue},
	{Name: "cancel-pull-request", Method: http.MethodPost, Path: "/cancelPullRequest", Scope: ScopeQueue},
	{Name: "restart-tests-on-pull-request", Method: http.MethodPost, Path: "/restartTestsOnPullRequest", Scope: ScopeQueue},
	{Name: "get-submitted-pull-request", Method: http.MethodPost, Path: "/getSubmittedPullRequest", Scope: ScopeRead},
	{Name: "set-impacted-targets", Method: http.MethodPost, Path: "/setImpactedTargets", Scope: ScopeQueue},
	{Name: "get-merge-queue-testing-details", Method: http.MethodPost, Path: "/getMergeQueueTestingDetails", Scope: ScopeRead},
	{Name: "list-pull-requests", Method: http.MethodPost, Path: "/listPullRequests", Scope: ScopeRead},
	{Name: "get-queue-history", Method: http.MethodPost, Path: "/getQueueHistory", Scope: ScopeRead},
	{Name: "github-webhook", Method: http.MethodPost, Path: "/github/webhook", Public: true},

	{Name: "get-merge-queue-metrics", Method: http.MethodGet, Path: "/getMergeQueueMetrics", Scope: ScopeRead},
}

// EventFunctions are the functions that no HTTP route reaches: each folder
// of functions/ and the kind of event that invokes it (template.yaml).
var EventFunctions = map[string]string{
	"ingest-bundle": "S3",       // a bundle landed in the bucket
	"scheduler":     "Schedule", // every minute
	// an outbox event was written (the table's stream, filtered to event
	// inserts); the scheduler delivers too, so this only makes it sooner
	"deliver-webhooks": "DynamoDB",
	// a client's queue command was recorded (the stream, filtered to
	// command inserts); the scheduler folds too, so this only makes it sooner
	"fold-queue-commands": "DynamoDB",
}

// WebFunction is the function serving the web app (package web): every
// request no route of the table takes. Deployed it is the HTTP API's
// $default route, so any path outside the route table reaches it; the
// local server sends it every path outside /v1's endpoints.
const WebFunction = "web"

// Handlers are an endpoint group's handlers, by function name: what every
// package of endpoints serves, each under its route of Routes.
type Handlers map[string]http.Handler

// Endpoint is the route served by h.
func (r Route) Endpoint(h http.Handler) Endpoint {
	return Endpoint{Name: r.Name, Method: r.Method, Path: r.Path, Public: r.Public, Scope: r.Scope, Handler: h}
}

// ScopeOf is the scope the named function's route needs; it panics for a
// name that is no route, a mistake in the code that names it (the web
// app's actions ask for the scope of the endpoint they stand for).
func ScopeOf(name string) Scope {
	r, ok := RouteOf(name)
	if !ok {
		panic("api: no route " + name)
	}
	return r.Scope
}

// RouteOf is the route of the named function.
func RouteOf(name string) (Route, bool) {
	for _, r := range Routes {
		if r.Name == name {
			return r, true
		}
	}
	return Route{}, false
}
