package main

import (
	"context"
	"encoding/json"
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
	"github.com/mainguard/mainguard/shared/github/githubsim"
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
	githubSim := fs.String("github-sim", "", "run a simulated GitHub on this address (e.g. 127.0.0.1:8081), with its control endpoints under /sim/, and use it")
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
	var sim *githubsim.Server
	if *githubSim != "" {
		if sim, err = startGitHubSim(ctx, *githubSim, filepath.Join(*dataDir, "github"), &cfg, stdout); err != nil {
			return err
		}
		defer func() { _ = sim.Close() }()
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
	if sim != nil {
		// The simulated GitHub announces its changes to our webhook, as GitHub would.
		sim.SetWebhook("http://"+ln.Addr().String()+"/v1/github/webhook", cfg.GitHubWebhookSecret)
	}
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

// startGitHubSim serves a simulated GitHub on addr (its REST API, and a
// control surface under /sim/ for the local demo) and points cfg at it:
// GITHUB_API_URL, and a token and webhook secret when none are set.
func startGitHubSim(ctx context.Context, addr, dir string, cfg *config.Config, stdout io.Writer) (*githubsim.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	sim, err := githubsim.NewUnstarted(dir, githubsim.Options{BaseURL: base})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/sim/", simControl(sim))
	mux.Handle("/", sim.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	cfg.GitHubAPIURL = base
	cfg.GitHubAppID = 0
	if cfg.GitHubToken == "" {
		cfg.GitHubToken = "local"
	}
	if cfg.GitHubWebhookSecret == "" {
		cfg.GitHubWebhookSecret = "local-github-sim"
	}
	fmt.Fprintf(stdout, "simulated GitHub at %s (control: POST %s/sim/{repo,pr,push,status,protect,merge}, GET %s/sim/history)\n", base, base, base)
	return sim, nil
}

// simControl is the simulated GitHub's control surface: JSON in, JSON out.
//
//	POST /sim/repo    {"repo":"acme/web","branch":"main"}
//	POST /sim/protect {"repo":"acme/web","branch":"main","contexts":["ci"]}
//	POST /sim/pr      {"repo":"acme/web","head":"feature","base":"main","title":"…","file":"a.txt","content":"…"} → {"number":1}
//	POST /sim/push    {"repo":"acme/web","pr":1,"file":"a.txt","content":"…"}
//	POST /sim/status  {"repo":"acme/web","branch":"trunk-merge/…" or "sha":"…","context":"ci","state":"success"}
//	POST /sim/merge   {"repo":"acme/web","pr":1}   (a merge by hand)
//	GET  /sim/history?repo=acme/web&branch=main    and  /sim/branches?repo=acme/web
func simControl(sim *githubsim.Server) http.Handler {
	type req struct {
		Repo     string   `json:"repo"`
		Branch   string   `json:"branch"`
		Contexts []string `json:"contexts"`
		Head     string   `json:"head"`
		Base     string   `json:"base"`
		Title    string   `json:"title"`
		File     string   `json:"file"`
		Content  string   `json:"content"`
		PR       int      `json:"pr"`
		SHA      string   `json:"sha"`
		Context  string   `json:"context"`
		State    string   `json:"state"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in req
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				http.Error(w, "body must be a JSON object: "+err.Error(), http.StatusBadRequest)
				return
			}
		} else {
			in.Repo, in.Branch = r.URL.Query().Get("repo"), r.URL.Query().Get("branch")
		}
		var out any = struct{}{}
		var err error
		switch r.URL.Path {
		case "/sim/repo":
			var sha string
			sha, err = sim.CreateRepo(in.Repo, in.Branch)
			out = map[string]string{"sha": sha}
		case "/sim/protect":
			err = sim.SetRequiredStatusChecks(in.Repo, in.Branch, in.Contexts)
		case "/sim/pr":
			if _, err = sim.CommitFile(in.Repo, in.Head, in.File, in.Content, "change "+in.File); err == nil {
				var n int
				n, err = sim.OpenPR(in.Repo, in.Head, in.Base, in.Title, "dev")
				out = map[string]int{"number": n}
			}
		case "/sim/push":
			var sha string
			sha, err = sim.PushPR(in.Repo, in.PR, in.File, in.Content, "change "+in.File)
			out = map[string]string{"sha": sha}
		case "/sim/status":
			sha := in.SHA
			if sha == "" {
				sha, err = sim.BranchHead(in.Repo, in.Branch)
			}
			if err == nil {
				err = sim.SetStatus(in.Repo, sha, in.Context, in.State, "", "")
			}
		case "/sim/merge":
			var sha string
			sha, err = sim.MergePR(in.Repo, in.PR, githubsim.MethodSquash)
			out = map[string]string{"sha": sha}
		case "/sim/history":
			out, err = sim.History(in.Repo, in.Branch)
		case "/sim/branches":
			out, err = sim.Branches(in.Repo)
		default:
			http.NotFound(w, r)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}
