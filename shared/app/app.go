package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/scheduler"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/uploadapi"
	"github.com/mainguard/mainguard/shared/web"
	"github.com/mainguard/mainguard/shared/webhooks"
	"github.com/mainguard/mainguard/shared/wiring"
	"github.com/mainguard/mainguard/shared/wiring/delivery"
	"github.com/mainguard/mainguard/shared/wiring/health"
	"github.com/mainguard/mainguard/shared/wiring/metricendpoints"
	"github.com/mainguard/mainguard/shared/wiring/queueendpoints"
	"github.com/mainguard/mainguard/shared/wiring/queues"
	"github.com/mainguard/mainguard/shared/wiring/testendpoints"
	"github.com/mainguard/mainguard/shared/wiring/tick"
	"github.com/mainguard/mainguard/shared/wiring/uploadendpoints"
	"github.com/mainguard/mainguard/shared/wiring/webapp"
)

// App is the whole service in one process: every endpoint group and every
// event handler, built on one wiring.Base by the builders each function's
// main calls for its own (Groups, and the event functions' builders), so
// the parts they share are one: one test-health service, one merge queue.
type App struct {
	*wiring.Base

	// Health ingests uploads and keeps test health current.
	Health *healthsvc.Service
	// Bundles is where upload bundles are kept; Uploads signs their
	// addresses.
	Bundles blobs.Store
	Uploads uploadapi.Uploads
	// Webhooks drains the organizations' outboxes into their endpoints
	// (contract 4); Guard is the check on endpoint addresses it dials
	// through, which the administration program applies when adding one:
	// the local server's (its own receivers on loopback allowed), or the
	// deployed one when Options.Deployed.
	Webhooks *webhooks.Deliverer
	Guard    webhooks.Guard
	// MergeQueue serves the merge-queue endpoints and GitHub's webhook;
	// its Driver advances the queues.
	MergeQueue *queueapi.Handlers
	// Scheduler is the scheduled function's work.
	Scheduler *scheduler.Scheduler
	// Web is the web app, on the same driver and health service.
	Web *web.Web

	handlers api.Handlers
	local    []api.Endpoint // endpoints of the local server alone
}

// Options override what New would otherwise build; zero values mean the
// real thing.
type Options struct {
	DB    store.DB // default: a client for cfg's endpoint or AWS
	Log   *slog.Logger
	Now   func() time.Time
	NewID func() string
	// GitHub replaces the GitHub client the configuration describes, and
	// NewUUID the merge queue's ids (queues, entries, test runs).
	GitHub  queuesvc.GitHub
	NewUUID func() string
	// AWS is the SDK configuration for the bundle bucket outside Lambda
	// (the administration program's --aws); nil: wiring.AWSConfig.
	AWS *aws.Config
	// Deployed says the App works on a deployment's table from outside
	// (the administration program's --aws): the endpoints it adds are
	// delivered by the deployed functions, so it checks them with their
	// guard, which refuses loopback. Otherwise it is the local server.
	Deployed bool
}

// Groups are the endpoint groups, each the builder its functions' mains
// hand lambdafn.Main: together they serve every route.
var Groups = []wiring.Group{
	wiring.Status, wiring.OpenAPI, testendpoints.Group, uploadendpoints.Group,
	queueendpoints.Group, metricendpoints.Group,
}

// New builds the service: the local parts (keys in the table, the bundle
// folder, commands folded as they are recorded) and then every part by
// the builders the functions use.
func New(ctx context.Context, cfg config.Config, opt Options) (*App, error) {
	b, err := wiring.NewBase(cfg, wiring.Options{
		DB: opt.DB, Log: opt.Log, Now: opt.Now, NewID: opt.NewID, KeysInTable: true,
		AWS: opt.AWS, LoopbackWebhooks: !opt.Deployed,
	})
	if err != nil {
		return nil, err
	}
	a := &App{Base: b, handlers: api.Handlers{}}
	if err := a.provide(opt); err != nil {
		return nil, err
	}
	if err := a.build(); err != nil {
		return nil, err
	}
	// Commands are folded before their answer by default, which keeps the
	// answers of tests deterministic; mainguard serve folds in the
	// background (queuesvc.Background), deployed the table's stream does.
	a.MergeQueue.Driver.AfterRecord = a.MergeQueue.Driver.FoldNow
	for _, g := range Groups {
		h, err := g(ctx, b)
		if err != nil {
			return nil, err
		}
		for name, h := range h {
			a.handlers[name] = h
		}
	}
	for _, r := range api.Routes {
		if a.handlers[r.Name] == nil {
			return nil, fmt.Errorf("no handler for the route of %q", r.Name)
		}
	}
	return a, nil
}

// provide sets the parts the local server has instead of a deployment's
// (and tests' stand-ins), before anything is built.
func (a *App) provide(opt Options) error {
	var err error
	if opt.GitHub != nil {
		err = queues.UseGitHub(a.Base, opt.GitHub)
	}
	if opt.NewUUID != nil {
		err = errors.Join(err, queues.UseIDs(a.Base, opt.NewUUID))
	}
	if a.Config.BundleBucket == "" {
		err = errors.Join(err, a.localBundles())
	}
	return err
}

// build builds every part by its builder: the event functions' handlers
// are these parts' (EventFunction).
func (a *App) build() error {
	var err, e error
	a.Health, e = health.Ingesting(a.Base)
	err = errors.Join(err, e)
	a.Bundles, e = wiring.Bundles(a.Base)
	err = errors.Join(err, e)
	a.Uploads, e = uploadendpoints.Uploads(a.Base)
	err = errors.Join(err, e)
	a.Guard = delivery.Guard(a.Base)
	a.Webhooks, e = delivery.Deliverer(a.Base)
	err = errors.Join(err, e)
	a.MergeQueue, e = queueendpoints.Handlers(a.Base)
	err = errors.Join(err, e)
	a.Web, e = webapp.Web(a.Base)
	err = errors.Join(err, e)
	a.Scheduler, e = tick.Scheduler(a.Base)
	return errors.Join(err, e)
}

// localBundles has uploads PUT to the local server, into the bundle
// folder (wiring.Bundles without a bucket), and ingested at once.
func (a *App) localBundles() error {
	local := &uploadapi.LocalUploads{
		BaseURL: a.Config.PublicAPIURL, Secret: a.Secret(config.SecretUploadURL),
		Dir: blobs.Dir{Root: a.Config.BundleDir}, Now: a.Now,
		Ingest: func(ctx context.Context, org, id string) error { return a.Health.Ingest(ctx, org, id) },
		Refuse: func(ctx context.Context, org, id, reason string) error { return a.Health.Refuse(ctx, org, id, reason) },
	}
	// Not a Lambda function: as deployed, S3 takes these requests and
	// streams them, so the local server does too.
	a.local = append(a.local, api.Endpoint{Name: "put-bundle", Method: http.MethodPut, Path: uploadapi.PutPath, Public: true, LocalOnly: true,
		MaxBody: uploadapi.MaxBundle, Handler: local.Put()})
	return uploadendpoints.UseUploads(a.Base, local)
}

// Endpoints lists every endpoint, in the order of the route table, then
// those of the local server alone.
func (a *App) Endpoints() []api.Endpoint {
	var out []api.Endpoint
	for _, r := range api.Routes {
		out = append(out, r.Endpoint(a.handlers[r.Name]))
	}
	return append(out, a.local...)
}

// Handler is the named function's handler behind the shared middleware.
func (a *App) Handler(name string) (http.Handler, error) {
	return a.Serve(name, a.handlers)
}

// Function is what the named Lambda function runs.
func (a *App) Function(name string) (api.LambdaHandler, error) {
	h, err := a.Handler(name)
	if err != nil {
		return nil, err
	}
	return api.Lambda(h), nil
}

// EventFunction is the handler of an event-driven function.
func (a *App) EventFunction(name string) (any, bool) {
	switch name {
	case "ingest-bundle":
		return a.Health.IngestS3, true
	case "scheduler":
		return a.Tick, true
	case "deliver-webhooks":
		return a.Webhooks.DeliverStream, true
	case "fold-queue-commands":
		return a.MergeQueue.Driver.FoldStream, true
	}
	return nil, false
}

// Tick is one run of the scheduled function.
func (a *App) Tick(ctx context.Context) error { return a.Scheduler.Tick(ctx) }

// DeliverAll drains the webhook outbox of every organization.
func (a *App) DeliverAll(ctx context.Context) error { return a.Webhooks.DeliverAll(ctx) }

// WebFunction is what the web function runs (lambdafn.WebMain).
func (a *App) WebFunction() api.LambdaHandler { return api.Lambda(a.WebHandler(a.Web.Handler())) }

// Mux serves every endpoint under /v1 on one listener, each through the
// Lambda adapter exactly as deployed, and every other path to the web
// app, as the HTTP API's $default route does (it answers unknown /v1
// paths with the API's plain-text 404).
func (a *App) Mux() http.Handler {
	mux := http.NewServeMux()
	for _, ep := range a.Endpoints() {
		if ep.LocalOnly {
			mux.Handle("/v1"+ep.Path, a.Server.Wrap(ep))
			continue
		}
		fn, _ := a.Function(ep.Name)
		mux.Handle("/v1"+ep.Path, api.Bridge(fn, api.MaxBody))
	}
	mux.Handle("/", api.Bridge(a.WebFunction(), api.MaxBody))
	return mux
}
