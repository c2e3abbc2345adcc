package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/mainguard/mainguard/docs"
	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/metricsapi"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/scheduler"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testsapi"
	"github.com/mainguard/mainguard/shared/uploadapi"
	"github.com/mainguard/mainguard/shared/web"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// App is the whole service in one process: every endpoint group and every
// event handler, built from one lambdafn.Base exactly as each function
// builds its own.
type App struct {
	*lambdafn.Base

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

	handlers lambdafn.Handlers
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
	// (the administration program's --aws); nil: lambdafn.AWSConfig.
	AWS *aws.Config
	// Deployed says the App works on a deployment's table from outside
	// (the administration program's --aws): the endpoints it adds are
	// delivered by the deployed functions, so it checks them with their
	// guard, which refuses loopback. Otherwise it is the local server.
	Deployed bool
}

// New builds the service.
func New(ctx context.Context, cfg config.Config, opt Options) (*App, error) {
	b, err := lambdafn.NewBase(cfg, lambdafn.Options{DB: opt.DB, Log: opt.Log, Now: opt.Now, NewID: opt.NewID, KeysInTable: true})
	if err != nil {
		return nil, err
	}
	a := &App{Base: b, handlers: lambdafn.Handlers{}}
	if err := a.bundles(opt.AWS); err != nil {
		return nil, err
	}
	a.Health = healthsvc.New(b.Store, a.Bundles, healthview.Viewer{PublicAppURL: cfg.PublicAppURL}, b.Now, b.NewID, b.Log)
	a.Guard = webhooks.Guard{AllowLoopback: !opt.Deployed, AllowPrivate: cfg.WebhookInternalNetworks}
	a.Webhooks = webhooks.NewDeliverer(b.Store, b.Now, b.Log, a.Guard)
	mq, err := queueapi.New(queueapi.Setup{Config: b.Config, Store: b.Store, Now: b.Now, NewID: opt.NewUUID, Log: b.Log, GitHub: opt.GitHub})
	if err != nil {
		return nil, err
	}
	a.MergeQueue = mq
	// The check runs go through the queue's GitHub client, when there is one.
	if c, ok := mq.Driver.GitHub.(healthsvc.CheckRuns); ok {
		a.Health.Checks = healthsvc.NewChecks(c, config.EnterpriseHost(cfg.GitHubAPIURL))
	}
	// Commands are folded before their answer by default, which keeps the
	// answers of tests deterministic; mainguard serve folds in the
	// background (queuesvc.Background), deployed the table's stream does.
	mq.Driver.AfterRecord = mq.Driver.FoldNow
	if a.Web, err = web.New(web.Setup{Base: b, Queues: mq.Driver, Health: a.Health}); err != nil {
		return nil, err
	}
	a.Scheduler = &scheduler.Scheduler{Health: a.Health, Queues: mq.Driver, Webhooks: a.Webhooks, Log: b.Log}

	groups := []lambdafn.Handlers{
		{"openapi": docs.Handler()},
		(&uploadapi.Handlers{Store: b.Store, Now: b.Now, Uploads: a.Uploads}).Endpoints(),
		mq.Endpoints(),
	}
	for _, g := range []lambdafn.Group{lambdafn.Status, testsapi.Group, metricsapi.Group} {
		h, err := g(ctx, b)
		if err != nil {
			return nil, err
		}
		groups = append(groups, h)
	}
	for _, g := range groups {
		for name, h := range g {
			a.handlers[name] = h
		}
	}
	for _, r := range lambdafn.Routes {
		if a.handlers[r.Name] == nil {
			return nil, fmt.Errorf("no handler for the route of %q", r.Name)
		}
	}
	return a, nil
}

// bundles chooses where bundles go: the S3 bucket when one is configured,
// else the local folder behind the local server's signed PUT.
func (a *App) bundles(awsCfg *aws.Config) error {
	if a.Config.BundleBucket == "" {
		a.Bundles = blobs.Dir{Root: a.Config.BundleDir}
		local := &uploadapi.LocalUploads{
			BaseURL: a.Config.PublicAPIURL, Secret: a.Secret(config.SecretUploadURL),
			Dir: blobs.Dir{Root: a.Config.BundleDir}, Now: a.Now,
			Ingest: func(ctx context.Context, org, id string) error { return a.Health.Ingest(ctx, org, id) },
			Refuse: func(ctx context.Context, org, id, reason string) error { return a.Health.Refuse(ctx, org, id, reason) },
		}
		a.Uploads = local
		// Not a Lambda function: as deployed, S3 takes these requests and
		// streams them, so the local server does too.
		a.local = append(a.local, api.Endpoint{Name: "put-bundle", Method: http.MethodPut, Path: uploadapi.PutPath, Public: true, LocalOnly: true,
			MaxBody: uploadapi.MaxBundle, Handler: local.Put()})
		return nil
	}
	if awsCfg == nil {
		c, err := lambdafn.AWSConfig(a.Config.Region, a.Config.S3Endpoint)
		if err != nil {
			return err
		}
		awsCfg = &c
	}
	b := blobs.NewS3(*awsCfg, a.Config.BundleBucket, a.Config.S3Endpoint)
	a.Bundles, a.Uploads = b, b
	return nil
}

// Endpoints lists every endpoint, in the order of the route table, then
// those of the local server alone.
func (a *App) Endpoints() []api.Endpoint {
	var out []api.Endpoint
	for _, r := range lambdafn.Routes {
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
