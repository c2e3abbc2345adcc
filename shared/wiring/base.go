package wiring

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
)

// Base is what every function builds first, once per copy, and what every
// builder of this package and its subpackages builds from.
type Base struct {
	Config config.Config
	Log    *slog.Logger
	Now    func() time.Time
	NewID  func() string // outbox event ids
	Store  *store.Store
	// Server is the middleware every request passes; Auth checks its
	// tokens and the web app's sessions, cached per copy.
	Server *api.Server
	Auth   *api.CachedAuth

	opt   Options
	parts parts
}

// Options override what NewBase would otherwise build; zero values mean
// the real thing.
type Options struct {
	DB    store.DB // default: a client for the configured endpoint or AWS
	Log   *slog.Logger
	Now   func() time.Time
	NewID func() string
	// KeysInTable keeps the generated keys (page tokens, sessions, upload
	// addresses) whose secret the configuration does not name in the
	// table, made on first use: the local server's way, which has no
	// Secrets Manager. A function never does: deployed, a key it was not
	// given is unavailable to it.
	KeysInTable bool
	// AWS is the SDK configuration of the bundle bucket outside Lambda
	// (the administration program's --aws); nil: AWSConfig.
	AWS *aws.Config
	// LoopbackWebhooks lets webhook endpoints be on loopback: the local
	// server's own receivers. Deployed, and from the administration
	// program on a deployment, they may not.
	LoopbackWebhooks bool
}

// NewBase builds the Base of cfg.
func NewBase(cfg config.Config, opt Options) (*Base, error) {
	b := &Base{Config: cfg, Log: opt.Log, Now: opt.Now, NewID: opt.NewID, opt: opt}
	if b.Now == nil {
		b.Now = time.Now
	}
	if b.NewID == nil {
		b.NewID = NewEventID
	}
	if b.Log == nil {
		b.Log = NewLogger(os.Stdout, cfg.LogLevel)
	}
	db := opt.DB
	if db == nil {
		c, err := DynamoClient(cfg)
		if err != nil {
			return nil, err
		}
		db = c
	}
	if cfg.BillDynamo {
		db = &billing.Meter{DB: db, Table: billing.FromCreateTable(store.TableSpec(cfg.TableName))}
	}
	b.Store = store.New(db, cfg.TableName, b.Now)
	b.Config.Secrets = newSecretReader(b.Config, b.Store, b.Now, opt.KeysInTable)
	b.Auth = &api.CachedAuth{Store: b.Store, TTL: cfg.AuthCacheTTL, Now: b.Now}
	b.Server = &api.Server{Auth: b.Auth, Log: b.Log, Now: b.Now}
	if cfg.RateLimit > 0 {
		b.Server.Limiter = &api.OrgLimiter{Store: b.Store, Rate: cfg.RateLimit, Burst: cfg.RateBurst, Now: b.Now, Log: b.Log}
		// Failed authentications: a burst of 30 per client address, then
		// one a second, counted in the table for every copy, so guessing
		// tokens costs the guesser, not the table.
		b.Server.AuthFailures = &api.FailureLimiter{Store: b.Store, Rate: 1, Burst: 30, Now: b.Now, Log: b.Log}
	}
	return b, nil
}

// LoopbackWebhooks says webhook endpoints may be on loopback
// (Options.LoopbackWebhooks).
func (b *Base) LoopbackWebhooks() bool { return b.opt.LoopbackWebhooks }

// Secret returns a reader of the named deployment secret (config's
// Secret* names).
func (b *Base) Secret(name string) func(ctx context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) { return b.Config.Secrets.Secret(ctx, name) }
}

// DynamoClient builds the DynamoDB client: DynamoDB Local when
// cfg.DynamoEndpoint is set (any credentials do), else AWS with the
// function's credentials (AWSConfig).
func DynamoClient(cfg config.Config) (*dynamodb.Client, error) {
	awsCfg, err := AWSConfig(cfg.Region, cfg.DynamoEndpoint)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoEndpoint)
		}
	}), nil
}

// AWSConfig is the SDK configuration for one service: any credentials for
// a local stand-in at endpoint (DynamoDB Local, an S3-compatible server),
// which ignores them; inside Lambda, the function's credentials and region
// as Lambda hands them over in the environment.
//
// Functions do not load the SDK's standard chain (package
// aws-sdk-go-v2/config: shared files, SSO, STS, every provider and
// setting): inside Lambda it would find these same environment credentials,
// but linking and loading it made up a third of a function's init. A
// configuration holding just the region and the credentials is what the
// service clients need; they fill in their own defaults (retries, HTTP
// client, endpoints). The SDK's environment settings (AWS_MAX_ATTEMPTS,
// AWS_ENDPOINT_URL_*) are therefore not read; the template sets none.
// Programs outside Lambda that talk to AWS (the administration program's
// --aws) load the standard chain themselves and pass the client in.
func AWSConfig(region, endpoint string) (aws.Config, error) {
	if endpoint != "" {
		return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, nil
	}
	if c, ok := lambdaConfig(os.Getenv, region); ok {
		return c, nil
	}
	return aws.Config{}, errors.New("aws configuration: no AWS_REGION and credentials in the environment, as Lambda sets them, and no local endpoint")
}

// lambdaConfig is the configuration inside a Lambda function: region and
// credentials from the environment Lambda sets; false elsewhere, or when
// any of them is missing.
func lambdaConfig(getenv func(string) string, region string) (aws.Config, bool) {
	if region == "" {
		region = getenv("AWS_REGION")
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if getenv("AWS_LAMBDA_FUNCTION_NAME") == "" || region == "" || id == "" || secret == "" {
		return aws.Config{}, false
	}
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN")),
	}, true
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
