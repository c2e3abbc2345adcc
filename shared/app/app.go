package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/mergequeue/driver"
	"github.com/mainguard/mainguard/shared/queueapi"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testview"
	"github.com/mainguard/mainguard/shared/uploadapi"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// App is the built service.
type App struct {
	Config config.Config
	Store  *store.Store
	Log    *slog.Logger
	Now    func() time.Time
	NewID  func() string

	// Health ingests uploads and keeps test health current.
	Health *healthsvc.Service
	// Bundles is where upload bundles are kept; Uploads signs their
	// addresses.
	Bundles blobs.Store
	Uploads uploadapi.Uploads
	// Webhooks drains the organizations' outboxes into their endpoints
	// (contract 4); Guard is the check on endpoint addresses it dials
	// through, which the administration program applies when adding one.
	Webhooks *webhooks.Deliverer
	Guard    webhooks.Guard
	// MergeQueue serves the merge-queue endpoints and GitHub's webhook;
	// its Driver advances the queues.
	MergeQueue *queueapi.Handlers

	server    *api.Server
	endpoints []api.Endpoint
	secrets   secretCache
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
	GitHub  driver.GitHub
	NewUUID func() string
}

// New builds the service.
func New(ctx context.Context, cfg config.Config, opt Options) (*App, error) {
	a := &App{Config: cfg, Log: opt.Log, Now: opt.Now, NewID: opt.NewID}
	if a.Now == nil {
		a.Now = time.Now
	}
	if a.NewID == nil {
		a.NewID = NewEventID
	}
	if a.Log == nil {
		a.Log = NewLogger(os.Stdout, cfg.LogLevel)
	}
	db := opt.DB
	if db == nil {
		c, err := DynamoClient(ctx, cfg)
		if err != nil {
			return nil, err
		}
		db = c
	}
	a.Store = store.New(db, cfg.TableName, a.Now)
	if err := a.bundles(ctx); err != nil {
		return nil, err
	}
	a.Health = &healthsvc.Service{
		Store: a.Store, Blobs: a.Bundles, Now: a.Now, NewID: a.NewID, Log: a.Log,
		Viewer: testview.Viewer{PublicAppURL: cfg.PublicAppURL},
	}
	a.Webhooks = &webhooks.Deliverer{
		Store: a.Store, Now: a.Now, Log: a.Log,
		// The Sender keeps the real clock: receivers check webhook-timestamp
		// against theirs.
		Sender: &webhooks.Sender{Client: webhooks.NewClient(a.Guard)},
	}
	a.server = &api.Server{
		Auth: &api.CachedAuth{Store: a.Store, TTL: cfg.AuthCacheTTL, Now: a.Now},
		Log:  a.Log,
		Now:  a.Now,
	}
	if cfg.RateLimit > 0 {
		a.server.Limiter = &api.RateLimiter{Rate: cfg.RateLimit, Burst: cfg.RateBurst, Now: a.Now}
	}
	mq, err := queueapi.New(queueapi.Setup{Config: cfg, Store: a.Store, Now: a.Now, NewID: opt.NewUUID, Log: a.Log, GitHub: opt.GitHub})
	if err != nil {
		return nil, err
	}
	a.MergeQueue = mq
	a.endpoints = a.routes()
	return a, nil
}

// bundles chooses where bundles go: the S3 bucket when one is configured,
// else the local folder behind the local server's signed PUT.
func (a *App) bundles(ctx context.Context) error {
	if a.Config.BundleBucket == "" {
		a.Bundles = blobs.Dir{Root: a.Config.BundleDir}
		a.Uploads = &uploadapi.LocalUploads{
			BaseURL: a.Config.PublicAPIURL, Secret: a.secret("upload-url"),
			Dir: blobs.Dir{Root: a.Config.BundleDir}, Now: a.Now,
			Ingest: func(ctx context.Context, org, id string) error { return a.Health.Ingest(ctx, org, id) },
		}
		return nil
	}
	awsCfg, err := awsConfig(ctx, a.Config.Region, a.Config.S3Endpoint)
	if err != nil {
		return err
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if a.Config.S3Endpoint != "" {
			o.BaseEndpoint, o.UsePathStyle = aws.String(a.Config.S3Endpoint), true
		}
	})
	b := blobs.S3{Client: client, Bucket: a.Config.BundleBucket}
	a.Bundles, a.Uploads = b, b
	return nil
}

// secretCache keeps the deployment's secrets once read: they never change.
type secretCache struct {
	mu     sync.Mutex
	values map[string][]byte
}

// secret returns a reader of the named deployment secret, cached per copy.
func (a *App) secret(name string) func(ctx context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		a.secrets.mu.Lock()
		defer a.secrets.mu.Unlock()
		if v, ok := a.secrets.values[name]; ok {
			return v, nil
		}
		v, err := a.Store.Secret(ctx, name, func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, err
		}
		if a.secrets.values == nil {
			a.secrets.values = map[string][]byte{}
		}
		a.secrets.values[name] = v
		return v, nil
	}
}

// DynamoClient builds the DynamoDB client: DynamoDB Local when
// cfg.DynamoEndpoint is set (any credentials do), else AWS with the
// standard credential chain.
func DynamoClient(ctx context.Context, cfg config.Config) (*dynamodb.Client, error) {
	awsCfg, err := awsConfig(ctx, cfg.Region, cfg.DynamoEndpoint)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoEndpoint)
		}
	}), nil
}

// awsConfig is the SDK configuration for one service: the standard
// credential chain in AWS, or any credentials for a local stand-in at
// endpoint (DynamoDB Local, an S3-compatible server), which ignores them.
func awsConfig(ctx context.Context, region, endpoint string) (aws.Config, error) {
	opts := []func(*awsconfig.LoadOptions) error{}
	if region != "" {
		opts = append(opts, awsconfig.WithRegion(region))
	}
	if endpoint != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	c, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("aws configuration: %w", err)
	}
	return c, nil
}

// NewLogger is the JSON logger every process uses.
func NewLogger(w *os.File, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// NewEventID returns a fresh outbox event id ("msg_" and 32 hex digits).
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// Endpoints lists every endpoint, in the order of the route table.
func (a *App) Endpoints() []api.Endpoint { return a.endpoints }

// Handler is the named function's handler behind the shared middleware.
func (a *App) Handler(name string) (http.Handler, error) {
	for _, ep := range a.endpoints {
		if ep.Name == name {
			return a.server.Wrap(ep), nil
		}
	}
	return nil, fmt.Errorf("no function named %q", name)
}

// Function is what the named Lambda function runs.
func (a *App) Function(name string) (api.LambdaHandler, error) {
	h, err := a.Handler(name)
	if err != nil {
		return nil, err
	}
	return api.Lambda(h), nil
}

// Mux serves every endpoint under /v1 on one listener, each through the
// Lambda adapter exactly as deployed. Unknown paths get a plain-text 404.
func (a *App) Mux() http.Handler {
	mux := http.NewServeMux()
	for _, ep := range a.endpoints {
		if ep.LocalOnly {
			// Not a Lambda function: as deployed, S3 takes these requests
			// and streams them, so the local server does too.
			mux.Handle("/v1"+ep.Path, a.server.Wrap(ep))
			continue
		}
		fn, _ := a.Function(ep.Name)
		mux.Handle("/v1"+ep.Path, api.Bridge(fn, api.MaxBody))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-request-id", api.NewRequestID())
		api.WriteError(w, r, errs.E(errs.NotFound, "no endpoint %s", strings.TrimSuffix(r.URL.Path, "/")))
	})
	return mux
}

// Main runs the named Lambda function: configuration from the environment,
// the app built once per copy, and lambda.Start. A bad configuration stops
// the copy at init with a clear message, before any request.
func Main(name string) {
	ctx := context.Background()
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a, err := New(ctx, cfg, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if ev, ok := a.EventFunction(name); ok {
		lambda.Start(ev)
		return
	}
	fn, err := a.Function(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lambda.Start(fn)
}
