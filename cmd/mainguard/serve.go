package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/dynamolocal"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

// serve runs every function behind one HTTP listener at /v1, on DynamoDB
// Local unless DYNAMODB_ENDPOINT names a DynamoDB already running.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	inMemory := fs.Bool("in-memory", false, "keep DynamoDB Local's data in memory only")
	dataDir := fs.String("data-dir", ".data", "where DynamoDB Local keeps its data, and bundles are kept")
	tick := fs.Duration("tick", 5*time.Second, "how often the scheduled function runs (deployed: every minute)")
	if err := fs.Parse(args); err != nil {
		return usageError(err.Error())
	}
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return err
	}
	log := app.NewLogger(os.Stdout, cfg.LogLevel)
	if getenv("BUNDLE_DIR") == "" {
		cfg.BundleDir = filepath.Join(*dataDir, "bundles")
	}
	if getenv("PUBLIC_API_URL") == "" {
		cfg.PublicAPIURL = "http://" + *addr + "/v1"
	}

	if cfg.DynamoEndpoint == "" {
		opt := dynamolocal.Options{}
		if !*inMemory {
			opt.DataDir = filepath.Join(*dataDir, "dynamodb")
		}
		log.Info("starting DynamoDB Local", "data", map[bool]string{true: "in memory", false: opt.DataDir}[*inMemory])
		in, err := dynamolocal.Start(ctx, opt)
		if err != nil {
			return err
		}
		defer in.Stop()
		cfg.DynamoEndpoint, cfg.Region = in.Endpoint, "us-east-1"
		if !*inMemory {
			// The administration commands find the local table through this.
			_ = os.WriteFile(filepath.Join(*dataDir, "dynamodb-endpoint"), []byte(in.Endpoint+"\n"), 0o644)
		}
	}
	log.Info("using DynamoDB", "endpoint", cfg.DynamoEndpoint, "table", cfg.TableName)

	db, err := app.DynamoClient(ctx, cfg)
	if err != nil {
		return err
	}
	if created, err := store.EnsureTable(ctx, db, cfg.TableName); err != nil {
		return err
	} else if created {
		log.Info("created table", "table", cfg.TableName)
	}
	a, err := app.New(ctx, cfg, app.Options{DB: db, Log: log})
	if err != nil {
		return err
	}
	if err := bootstrap(ctx, a.Store, getenv("MAINGUARD_BOOTSTRAP_TOKEN"), stdout, log); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Mux(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "mainguard is serving http://%s/v1 (Ctrl-C stops it)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go ticker(ctx, a, *tick)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ticker runs the scheduled function every d until ctx ends, as
// EventBridge does when deployed. A failed tick is logged (by Tick) and the
// next one tries again.
func ticker(ctx context.Context, a *app.App, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = a.Tick(ctx)
		}
	}
}

// bootstrap makes sure the organization "local" can be used: with a token
// given (scripts, CI) it holds that token; with none and no "local" yet, it
// is created and a fresh token printed once.
func bootstrap(ctx context.Context, s *store.Store, token string, stdout io.Writer, log *slog.Logger) error {
	const org = "local"
	_, err := s.GetOrg(ctx, org)
	missing := errs.Is(err, errs.NotFound)
	if err != nil && !missing {
		return err
	}
	if missing {
		if _, err := s.CreateOrg(ctx, org, "Local"); err != nil && !errs.Is(err, errs.Conflict) {
			return err
		}
	}
	switch {
	case token != "":
		if _, err := s.AddToken(ctx, org, token); err != nil {
			return fmt.Errorf("MAINGUARD_BOOTSTRAP_TOKEN: %s", errs.MessageOf(err))
		}
		log.Info("organization local holds the bootstrap token")
	case missing:
		secret, tok, err := s.CreateToken(ctx, org)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created organization %q with token %s (shown once, keep it):\n  export MAINGUARD_TOKEN=%s\n", org, tok.ID, secret)
	}
	return nil
}
