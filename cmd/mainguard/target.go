package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/wiring"
)

// endpointFile is the file in the local server's data folder that holds
// the address of its DynamoDB Local, for the administration commands;
// appURLFile holds the address of its web app (its PUBLIC_APP_URL), where
// the pages they link to are.
const (
	endpointFile = "dynamodb-endpoint"
	appURLFile   = "app-url"
)

// target is where an administration command works: the flags that choose
// the table, shared by every command that changes or reads it.
type target struct {
	aws     *bool
	dataDir *string
	// where says, once chosen, which table this is, for messages.
	where string
	local bool // the table came from the local server's endpoint file
	// appURL is the web app's address of the table's deployment, once
	// chosen: PUBLIC_APP_URL, or the local server's; "" when neither says.
	appURL string
}

func targetFlags(f *flags, e *env) *target {
	return &target{
		aws:     f.Bool("aws", false, "work on the table in AWS (standard credentials), not the local server's"),
		dataDir: dataDirFlag(f, e),
	}
}

// config chooses the table, in this order: DYNAMODB_ENDPOINT when set; AWS
// when asked (--aws, or AWS_PROFILE set); else the local server's endpoint
// file. Nothing else: a command never goes to AWS by default. It says on
// stderr which table it uses.
func (t *target) config(e *env) (config.Config, error) {
	cfg, err := config.FromEnv(e.getenv)
	if err != nil {
		return cfg, err
	}
	if e.getenv("PUBLIC_APP_URL") != "" {
		t.appURL = cfg.PublicAppURL
	}
	switch {
	case cfg.DynamoEndpoint != "":
		t.where = fmt.Sprintf("table %s at %s (DYNAMODB_ENDPOINT)", cfg.TableName, cfg.DynamoEndpoint)
	case *t.aws || e.getenv("AWS_PROFILE") != "":
		why := "--aws"
		if !*t.aws {
			why = "AWS_PROFILE=" + e.getenv("AWS_PROFILE")
		}
		region := cfg.Region
		if region == "" {
			region = or(e.getenv("AWS_DEFAULT_REGION"), "of the AWS configuration")
		}
		t.where = fmt.Sprintf("table %s in AWS region %s (%s)", cfg.TableName, region, why)
	default:
		path := filepath.Join(*t.dataDir, endpointFile)
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("no table to work on: no local server has written %s. Start one with `make run` (or `mainguard serve`), or pass --aws to work on the deployed table (or set DYNAMODB_ENDPOINT)", path)
		}
		cfg.DynamoEndpoint = strings.TrimSpace(string(b))
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		t.where = fmt.Sprintf("the local server's table %s at %s (from %s)", cfg.TableName, cfg.DynamoEndpoint, path)
		t.local = true
		if b, err := os.ReadFile(filepath.Join(*t.dataDir, appURLFile)); err == nil && t.appURL == "" {
			// The pages of what this changes are the local server's.
			t.appURL = strings.TrimSpace(string(b))
			cfg.PublicAppURL = t.appURL
		}
	}
	fmt.Fprintf(e.stderr, "mainguard: using %s\n", t.where)
	return cfg, nil
}

// open builds the service on the chosen table, as every function builds
// it, so administration changes what the endpoints would. A DynamoDB Local
// table that does not exist yet is created (deployed, CloudFormation owns
// it).
func (t *target) open(e *env) (*app.App, error) {
	cfg, err := t.config(e)
	if err != nil {
		return nil, err
	}
	opt := app.Options{Log: slog.New(slog.DiscardHandler)}
	if cfg.DynamoEndpoint != "" {
		db, err := wiring.DynamoClient(cfg)
		if err != nil {
			return nil, err
		}
		if _, err := store.EnsureTable(e.ctx, db, cfg.TableName); err != nil {
			return nil, t.failed(err)
		}
		opt.DB = db
	} else {
		// AWS, from a person's machine: the SDK's standard chain (profiles,
		// SSO), which the functions do without.
		awsCfg, err := awsconfig.LoadDefaultConfig(e.ctx, awsconfig.WithRegion(cfg.Region))
		if err != nil {
			return nil, fmt.Errorf("aws configuration: %w", err)
		}
		opt.DB, opt.AWS, opt.Deployed = dynamodb.NewFromConfig(awsCfg), &awsCfg, true
	}
	return app.New(e.ctx, cfg, opt)
}

// openOrg is open, for a command on one organization's data: an
// organization that does not exist is said so, first, not as the part of
// it the command then fails to find (a repository, a test), and not as an
// empty list. One GetItem.
func (t *target) openOrg(e *env, org string) (*app.App, error) {
	a, err := t.open(e)
	if err != nil {
		return nil, err
	}
	if _, err := a.Store.GetOrg(e.ctx, org); err != nil {
		return nil, t.failed(err)
	}
	return a, nil
}

// failed turns an error of the store into what the person can do about
// it: start the server when nothing answers, else the domain's sentence.
func (t *target) failed(err error) error {
	if err == nil {
		return nil
	}
	if unreachable(err) {
		if t.local {
			return fmt.Errorf("nothing answers at %s: start the local server with `make run` (or `mainguard serve`)", t.where)
		}
		return fmt.Errorf("nothing answers at %s", t.where)
	}
	return clientError(err)
}

// clientError keeps a domain error's message and drops SDK detail unless
// the error is unexpected.
func clientError(err error) error {
	if msg := errs.MessageOf(err); msg != "" && errs.CodeOf(err) != errs.Internal {
		return fmt.Errorf("%s", msg)
	}
	return err
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
