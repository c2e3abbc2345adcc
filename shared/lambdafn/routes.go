package lambdafn

import "net/http"

// Route is one HTTP endpoint: the function that serves it (its folder of
// functions/), its method and path below /v1, and whether it is public
// (no x-api-token).
type Route struct {
	Name   string
	Method string
	Path   string
	Public bool
}

// Routes is the route table: every HTTP function of the service.
// template.yaml declares the same, the OpenAPI document describes them, and
// tests keep the three in step; the local server serves exactly these.
var Routes = []Route{
	{Name: "status", Method: http.MethodGet, Path: "/status", Public: true},
	{Name: "openapi", Method: http.MethodGet, Path: "/openapi.yaml", Public: true},

	{Name: "get-test-details", Method: http.MethodPost, Path: "/flaky-tests/get-test-details"},
	{Name: "link-ticket-to-test-case", Method: http.MethodPost, Path: "/flaky-tests/link-ticket-to-test-case"},
	{Name: "list-quarantined-tests", Method: http.MethodPost, Path: "/flaky-tests/list-quarantined-tests"},
	{Name: "list-unhealthy-tests", Method: http.MethodPost, Path: "/flaky-tests/list-unhealthy-tests"},
	{Name: "list-failing-tests", Method: http.MethodPost, Path: "/flaky-tests/list-failing-tests"},

	{Name: "get-quarantine-config", Method: http.MethodPost, Path: "/metrics/getQuarantineConfig"},
	{Name: "create-bundle-upload", Method: http.MethodPost, Path: "/metrics/createBundleUpload"},

	{Name: "create-queue", Method: http.MethodPost, Path: "/createQueue"},
	{Name: "get-queue", Method: http.MethodPost, Path: "/getQueue"},
	{Name: "update-queue", Method: http.MethodPost, Path: "/updateQueue"},
	{Name: "delete-queue", Method: http.MethodPost, Path: "/deleteQueue"},
	{Name: "submit-pull-request", Method: http.MethodPost, Path: "/submitPullRequest"},
	{Name: "cancel-pull-request", Method: http.MethodPost, Path: "/cancelPullRequest"},
	{Name: "restart-tests-on-pull-request", Method: http.MethodPost, Path: "/restartTestsOnPullRequest"},
	{Name: "get-submitted-pull-request", Method: http.MethodPost, Path: "/getSubmittedPullRequest"},
	{Name: "set-impacted-targets", Method: http.MethodPost, Path: "/setImpactedTargets"},
	{Name: "get-merge-queue-testing-details", Method: http.MethodPost, Path: "/getMergeQueueTestingDetails"},
	{Name: "list-pull-requests", Method: http.MethodPost, Path: "/listPullRequests"},
	{Name: "get-queue-history", Method: http.MethodPost, Path: "/getQueueHistory"},
	{Name: "github-webhook", Method: http.MethodPost, Path: "/github/webhook", Public: true},

	{Name: "get-merge-queue-metrics", Method: http.MethodGet, Path: "/getMergeQueueMetrics"},
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

// RouteOf is the route of the named function.
func RouteOf(name string) (Route, bool) {
	for _, r := range Routes {
		if r.Name == name {
			return r, true
		}
	}
	return Route{}, false
}
