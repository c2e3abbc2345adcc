package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/dynamolocal"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/wiring"
)

// serve is `mainguard serve`: every function behind one HTTP listener at
// /v1, on DynamoDB Local unless DYNAMODB_ENDPOINT names a DynamoDB already
// running, with the scheduled function ticking. Before it starts anything
// or writes anything, it takes its address and its data folder, so a
// second server is refused without disturbing the first.
func serve(e *env, args []string) error {
	o, err := parseServe(e, args)
	if err != nil {
		return err
	}
	cfg, err := config.FromEnv(e.getenv)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("cannot serve on %s (another mainguard serve?): %w", o.addr, err)
	}
	defer ln.Close()
	unlock, err := lockDataDir(o.dataDir)
	if err != nil {
		return err
	}
	defer unlock()

	log := wiring.NewLogger(os.Stdout, cfg.LogLevel)
	localDefaults(e, &cfg, ln.Addr().String(), o.dataDir)
	// The table is this data folder's own: kept in it by the DynamoDB
	// Local started below, which only the holder of the folder's lock
	// starts (not so for a DynamoDB given by DYNAMODB_ENDPOINT, which
	// another server may use).
	ownTable := cfg.DynamoEndpoint == "" && !o.inMemory
	if cfg.DynamoEndpoint == "" {
		stop, err := startDynamoLocal(e, &cfg, o, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	remove, err := writeServerFiles(cfg, o.dataDir)
	defer remove()
	if err != nil {
		return err
	}
	db, err := openTable(e.ctx, cfg, log)
	if err != nil {
		return err
	}
	sim, stopSim, err := startLocalGitHub(e, o, &cfg, db)
	if err != nil {
		return err
	}
	defer stopSim()
	a, err := app.New(e.ctx, cfg, app.Options{DB: db, Log: log})
	if err != nil {
		return err
	}
	// Queue commands are answered once recorded and folded behind the
	// answer, as the table's stream does deployed.
	folds := &queuesvc.Background{Driver: a.MergeQueue.Driver, Ctx: e.ctx}
	a.MergeQueue.Driver.AfterRecord = folds.Notify
	defer folds.Wait()
	if err := bootstrap(e.ctx, a.Store, e.getenv("MAINGUARD_BOOTSTRAP_TOKEN"), e.stdout, log); err != nil {
		return err
	}
	resuming := resumeInterrupted(e.ctx, a, ownTable, log)
	defer resuming.Wait()
	return listen(e, ln, a, sim, cfg, o.tick, log)
}

// openTable is the DynamoDB client of cfg, on a table it creates when
// missing.
func openTable(ctx context.Context, cfg config.Config, log *slog.Logger) (store.DB, error) {
	log.Info("using DynamoDB", "endpoint", cfg.DynamoEndpoint, "table", cfg.TableName)
	db, err := wiring.DynamoClient(cfg)
	if err != nil {
		return nil, err
	}
	if created, err := store.EnsureTable(ctx, db, cfg.TableName); err != nil {
		return nil, err
	} else if created {
		log.Info("created table", "table", cfg.TableName)
	}
	return db, nil
}

// serveOptions are the flags of `mainguard serve`.
type serveOptions struct {
	addr      string
	inMemory  bool
	dataDir   string
	tick      time.Duration
	githubSim string
}

func parseServe(e *env, args []string) (serveOptions, error) {
	f := newFlags(cmdOf("serve"))
	addr := f.String("addr", "127.0.0.1:8080", "address to listen on")
	inMemory := f.Bool("in-memory", false, "keep DynamoDB Local's data (and the simulated GitHub's) in memory only")
	dataDir := dataDirFlag(f, e)
	tick := f.Duration("tick", 5*time.Second, "how often the scheduled function runs (deployed: every minute)")
	githubSim := f.String("github-sim", "127.0.0.1:8081", "address of the simulated GitHub the merge queue uses when GitHub is not configured (GITHUB_TOKEN or a GitHub App); \"off\" for none")
	if _, err := f.parse(e, args, 0); err != nil {
		return serveOptions{}, err
	}
	return serveOptions{addr: *addr, inMemory: *inMemory, dataDir: *dataDir, tick: *tick, githubSim: *githubSim}, nil
}

// localDefaults sets what the environment leaves unset to this server's
// own: its bundle folder in the data folder, its API and pages at addr.
func localDefaults(e *env, cfg *config.Config, addr, dataDir string) {
	if e.getenv("BUNDLE_DIR") == "" {
		cfg.BundleDir = filepath.Join(dataDir, "bundles")
	}
	if e.getenv("PUBLIC_API_URL") == "" {
		cfg.PublicAPIURL = "http://" + addr + "/v1"
	}
	if e.getenv("PUBLIC_APP_URL") == "" {
		// The web app is served here too, so every html_url and
		// http_details_url the API hands out opens on this server.
		cfg.PublicAppURL = "http://" + addr
	}
}

// startDynamoLocal starts DynamoDB Local for the server and points cfg at
// it; stop ends it.
func startDynamoLocal(e *env, cfg *config.Config, o serveOptions, log *slog.Logger) (stop func(), err error) {
	// It starts as slowly as the machine makes it; meanwhile the
	// terminal says so every few seconds.
	opt := dynamolocal.Options{Progress: e.stderr}
	if !o.inMemory {
		opt.DataDir = filepath.Join(o.dataDir, "dynamodb")
	}
	log.Info("starting DynamoDB Local", "data", map[bool]string{true: "in memory", false: opt.DataDir}[o.inMemory])
	// Supervised: if it dies, it is started again on the same port and
	// data, and the server goes on (its calls answer 503 meanwhile).
	var endpoint atomic.Pointer[string] // set once it runs; read by a restart
	base := *cfg                        // what a restart needs, taken before cfg changes on
	in, err := dynamolocal.Supervise(e.ctx, opt, func(exit error) {
		log.Warn("DynamoDB Local exited and was started again", "exit", fmt.Sprint(exit))
		if ep := endpoint.Load(); o.inMemory && ep != nil {
			// In memory, the data went with the process: an empty table
			// again, so that the server answers.
			c := base
			c.DynamoEndpoint, c.Region = *ep, "us-east-1"
			db, err := wiring.DynamoClient(c)
			if err == nil {
				_, err = store.EnsureTable(context.Background(), db, c.TableName)
			}
			log.Warn("in-memory data lost; table created again", "err", fmt.Sprint(err))
		}
	})
	if err != nil {
		return nil, err
	}
	endpoint.Store(&in.Endpoint)
	cfg.DynamoEndpoint, cfg.Region = in.Endpoint, "us-east-1"
	return in.Stop, nil
}

// writeServerFiles writes where this server's table and pages are: the
// administration commands find them through these files, which remove
// takes away when the server goes (remove is never nil).
func writeServerFiles(cfg config.Config, dataDir string) (remove func(), err error) {
	var written []string
	remove = func() {
		for _, p := range written {
			os.Remove(p)
		}
	}
	for _, f := range []struct{ path, content string }{
		{filepath.Join(dataDir, endpointFile), cfg.DynamoEndpoint},
		{filepath.Join(dataDir, appURLFile), cfg.PublicAppURL},
	} {
		if err := os.WriteFile(f.path, []byte(f.content+"\n"), 0o644); err != nil {
			return remove, err
		}
		written = append(written, f.path)
	}
	return remove, nil
}

// startLocalGitHub starts the simulated GitHub when no GitHub is
// configured and -github-sim allows it (nil otherwise), its repositories
// the local organization's; stop ends it (stop is never nil).
func startLocalGitHub(e *env, o serveOptions, cfg *config.Config, db store.DB) (sim *githubsim.Server, stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	if o.githubSim == "off" || cfg.GitHubToken != "" || cfg.GitHubAppID != 0 {
		return nil, stop, nil
	}
	simDir := filepath.Join(o.dataDir, "github")
	if o.inMemory {
		// The table starts empty, so GitHub must too: old repositories
		// of the same names would carry old branches and history.
		if simDir, err = os.MkdirTemp("", "mainguard-github-"); err != nil {
			return nil, stop, err
		}
		stops = append(stops, func() { os.RemoveAll(simDir) })
	}
	// The simulated GitHub's repositories are the local organization's,
	// claimed as /sim/repo makes them: no other organization of this
	// server runs a merge queue on them.
	st := store.New(db, cfg.TableName, nil)
	claim := func(ctx context.Context, owner, name string) error {
		_, err := st.ClaimRepo(ctx, localOrg, owner, name, false)
		return err
	}
	if sim, err = startGitHubSim(e.ctx, o.githubSim, simDir, cfg, e.stdout, claim); err != nil {
		return nil, stop, err
	}
	stops = append(stops, func() { _ = sim.Close() })
	return sim, stop, nil
}

// listen serves a on ln, with the scheduled function ticking every tick,
// until the command's context ends; then it shuts the server down.
func listen(e *env, ln net.Listener, a *app.App, sim *githubsim.Server, cfg config.Config, tick time.Duration, log *slog.Logger) error {
	srv := newHTTPServer(a.Mux(), bodyTimeout)
	fmt.Fprintf(e.stdout, "mainguard is serving http://%s/v1 and the web app at http://%s/ (Ctrl-C stops it)\n", ln.Addr(), ln.Addr())
	if sim != nil {
		// The simulated GitHub announces its changes to our webhook, as GitHub would.
		sim.SetWebhook("http://"+ln.Addr().String()+"/v1/github/webhook", cfg.GitHubWebhookSecret)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lingering{ln}) }()
	go ticker(e.ctx, a, tick)
	select {
	case err := <-errc:
		return err
	case <-e.ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// lockDataDir makes sure one server at a time uses dir: it holds an
// exclusive lock on dir/serve.lock, which names its process, for as long
// as it runs (the system drops the lock when the process ends, however it
// ends). A second server is refused with the first one's process id.
func lockDataDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "serve.lock")
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := io.ReadAll(file)
		_ = file.Close()
		who := "another mainguard serve"
		if p := strings.TrimSpace(string(pid)); p != "" {
			who += " (process " + p + ")"
		}
		return nil, fmt.Errorf("%s is using the data folder %s: stop it first, or give this one another --data-dir", who, dir)
	}
	_ = file.Truncate(0)
	_, _ = file.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { _ = file.Close() }, nil
}

// resumeInterrupted takes over, in the background, the ingests that the
// previous server on this data folder was running when it died (kill -9,
// a power cut). Their uploads hold leases that look alive for minutes
// (healthsvc.LeaseTTL), and the scheduler would resume them only once
// those lapsed (store.ResumeGrace later). Here they can be taken over at
// once, when the table is this folder's own (ownTable): that server is
// gone (this one holds the folder's lock), and they are listed before
// anything is served, so no ingest of this server holds any of them.
// Nothing to do for an in-memory table (it starts empty) or a DynamoDB
// other servers may share.
func resumeInterrupted(ctx context.Context, a *app.App, ownTable bool, log *slog.Logger) *sync.WaitGroup {
	var wg sync.WaitGroup
	if !ownTable {
		return &wg
	}
	ups, err := a.Health.Interrupted(ctx)
	if err != nil {
		// The scheduler resumes them once their leases lapse.
		log.Warn("interrupted ingests not looked for", "err", err.Error())
		return &wg
	}
	wg.Go(func() {
		for _, up := range ups {
			if err := a.Health.TakeOver(ctx, up); err != nil {
				log.Warn("interrupted ingest not taken over; the scheduler resumes it once its lease lapses", "org", up.Org, "upload", up.ID, "err", err.Error())
			}
		}
	})
	return &wg
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

// localOrg is the local server's own organization.
const localOrg = "local"

// bootstrap makes sure the organization "local" can be used: with a token
// given (scripts, CI) it holds that token; with none and no "local" yet, it
// is created and a fresh token printed once.
func bootstrap(ctx context.Context, s *store.Store, token string, stdout io.Writer, log *slog.Logger) error {
	const org = localOrg
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
// GITHUB_API_URL and the web address of its pages, and a token and
// webhook secret when none are set.
func startGitHubSim(ctx context.Context, addr, dir string, cfg *config.Config, stdout io.Writer, claim func(ctx context.Context, owner, name string) error) (*githubsim.Server, error) {
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
	mux.Handle("/sim/", simControl(sim, claim))
	mux.Handle("/", sim.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	cfg.GitHubAPIURL, cfg.GitHubWebURL = base, base
	cfg.GitHubAppID = 0
	if cfg.GitHubToken == "" {
		cfg.GitHubToken = "local"
	}
	if cfg.GitHubWebhookSecret == "" {
		cfg.GitHubWebhookSecret = "local-github-sim"
	}
	fmt.Fprintf(stdout, "simulated GitHub at %s (control: POST %s/sim/{repo,pr,push,status,protect,ruleset,merge,comment,label}, GET %s/sim/{history,comments})\n", base, base, base)
	return sim, nil
}

// simControl is the simulated GitHub's control surface: JSON in, JSON out.
//
//	POST /sim/repo    {"repo":"acme/web","branch":"main"}
//	POST /sim/protect {"repo":"acme/web","branch":"main","contexts":["ci"]}
//	POST /sim/ruleset {"repo":"acme/web" or "org":"acme","branch":"main","contexts":["ci"],"strict":false} → {"id":…}
//	                  (an active ruleset requiring the contexts on branch, default the default branch)
//	POST /sim/pr      {"repo":"acme/web","head":"feature","base":"main","title":"…","file":"a.txt","content":"…"} → {"number":1}
//	POST /sim/push    {"repo":"acme/web","pr":1,"file":"a.txt","content":"…"}
//	POST /sim/status  {"repo":"acme/web","branch":"trunk-merge/…" or "sha":"…" or "pr":1,"context":"ci","state":"success"}
//	                  ("pr": the queue's test branch of that pull request)
//	POST /sim/merge   {"repo":"acme/web","pr":1}   (a merge by hand)
//	POST /sim/comment {"repo":"acme/web","pr":1,"body":"/mainguard merge","user":"dev"} → {"id":…}
//	                  (an issue_comment webhook: the queue's comment commands)
//	POST /sim/label   {"repo":"acme/web","pr":1,"label":"mainguard-merge","remove":false,"user":"dev"}
//	GET  /sim/history?repo=acme/web&branch=main, /sim/branches?repo=acme/web
//	     and /sim/comments?repo=acme/web&pr=1
//
// "dev", who opens the pull requests, has write access to every repository
// made here (and so may command the queue); any other user only reads.
// Each repository made here is claimed (claim) for the local organization.
func simControl(sim *githubsim.Server, claim func(ctx context.Context, owner, name string) error) http.Handler {
	calls := simCalls(claim)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, err := decodeSimRequest(r)
		if err != nil {
			http.Error(w, "body must be a JSON object: "+err.Error(), http.StatusBadRequest)
			return
		}
		call, ok := calls[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		out, err := call(r.Context(), sim, in)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if out == nil {
			out = struct{}{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// simRequest is the arguments of a /sim/ call.
type simRequest struct {
	Repo     string   `json:"repo"`
	Branch   string   `json:"branch"`
	Contexts []string `json:"contexts"`
	Head     string   `json:"head"`
	Base     string   `json:"base"`
	Title    string   `json:"title"`
	File     string   `json:"file"`
	Content  string   `json:"content"`
	PR       int      `json:"pr"`
	Body     string   `json:"body"`
	User     string   `json:"user"`
	Label    string   `json:"label"`
	Remove   bool     `json:"remove"`
	SHA      string   `json:"sha"`
	Context  string   `json:"context"`
	State    string   `json:"state"`
	Org      string   `json:"org"`
	Strict   bool     `json:"strict"`
}

// decodeSimRequest reads a POST's JSON body, or a GET's repo, branch and
// pr; the user is "dev" unless named.
func decodeSimRequest(r *http.Request) (simRequest, error) {
	var in simRequest
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			return in, err
		}
	} else {
		in.Repo, in.Branch = r.URL.Query().Get("repo"), r.URL.Query().Get("branch")
		in.PR, _ = strconv.Atoi(r.URL.Query().Get("pr"))
	}
	if in.User == "" {
		in.User = "dev"
	}
	return in, nil
}

// simCall answers one /sim/ path: what to send back (nil: {}), or why not.
type simCall func(ctx context.Context, sim *githubsim.Server, in simRequest) (any, error)

// simCalls are the /sim/ paths and their calls; claim gives a new
// repository to the local organization.
func simCalls(claim func(ctx context.Context, owner, name string) error) map[string]simCall {
	return map[string]simCall{
		"/sim/repo": func(ctx context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			sha, err := sim.CreateRepo(in.Repo, in.Branch)
			if err == nil {
				err = sim.SetPermission(in.Repo, "dev", "write")
			}
			if owner, name, ok := strings.Cut(in.Repo, "/"); ok && err == nil {
				err = claim(ctx, owner, name)
			}
			return map[string]string{"sha": sha}, err
		},
		"/sim/protect": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			return nil, sim.SetRequiredStatusChecks(in.Repo, in.Branch, in.Contexts)
		},
		"/sim/ruleset": simRuleset,
		"/sim/pr": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			if _, err := sim.CommitFile(in.Repo, in.Head, in.File, in.Content, "change "+in.File); err != nil {
				return nil, err
			}
			n, err := sim.OpenPR(in.Repo, in.Head, in.Base, in.Title, "dev")
			return map[string]int{"number": n}, err
		},
		"/sim/push": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			sha, err := sim.PushPR(in.Repo, in.PR, in.File, in.Content, "change "+in.File)
			return map[string]string{"sha": sha}, err
		},
		"/sim/status": simStatus,
		"/sim/merge": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			sha, err := sim.MergePR(in.Repo, in.PR, githubsim.MethodSquash)
			return map[string]string{"sha": sha}, err
		},
		"/sim/comment": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			id, err := sim.AddComment(in.Repo, in.PR, in.User, in.Body)
			return map[string]int64{"id": id}, err
		},
		"/sim/label": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			if in.Remove {
				return nil, sim.RemoveLabel(in.Repo, in.PR, in.User, in.Label)
			}
			return nil, sim.AddLabel(in.Repo, in.PR, in.User, in.Label)
		},
		"/sim/comments": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			return sim.Comments(in.Repo, in.PR)
		},
		"/sim/history": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			return sim.History(in.Repo, in.Branch)
		},
		"/sim/branches": func(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
			return sim.Branches(in.Repo)
		},
	}
}

// simRuleset adds an active ruleset requiring the contexts on the branch
// (default the default branch), to the organization or the repository.
func simRuleset(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
	rs := githubsim.Ruleset{Strict: in.Strict}
	for _, c := range in.Contexts {
		rs.Checks = append(rs.Checks, githubsim.RequiredCheck{Context: c})
	}
	if in.Branch != "" {
		rs.Include = []string{"refs/heads/" + in.Branch}
	}
	var id int64
	var err error
	if in.Org != "" {
		id, err = sim.AddOrgRuleset(in.Org, rs)
	} else {
		id, err = sim.AddRuleset(in.Repo, rs)
	}
	return map[string]int64{"id": id}, err
}

// simStatus sets a commit status on the sha, the branch's head, or the
// head of the PR's test branch.
func simStatus(_ context.Context, sim *githubsim.Server, in simRequest) (any, error) {
	sha, branch := in.SHA, in.Branch
	var err error
	if sha == "" && branch == "" && in.PR > 0 {
		branch, err = testBranchOf(sim, in.Repo, in.PR)
	}
	if sha == "" && err == nil {
		sha, err = sim.BranchHead(in.Repo, branch)
	}
	if err == nil {
		err = sim.SetStatus(in.Repo, sha, in.Context, in.State, "", "")
	}
	return nil, err
}

// testBranchOf is the merge queue's test branch of pull request pr
// (trunk-merge/pr-{pr}/…), so the demo can report a status on it by number.
func testBranchOf(sim *githubsim.Server, repo string, pr int) (string, error) {
	branches, err := sim.Branches(repo)
	if err != nil {
		return "", err
	}
	prefix := fmt.Sprintf("trunk-merge/pr-%d/", pr)
	for _, b := range branches {
		if strings.HasPrefix(b, prefix) {
			return b, nil
		}
	}
	return "", fmt.Errorf("pull request #%d has no test branch (yet)", pr)
}

// bodyTimeout bounds how long a request may take to arrive, body included:
// 20 MiB at 200 KB/s. A client that stops sending half-way frees its
// connection then, instead of holding it for ever.
const bodyTimeout = 2 * time.Minute

// newHTTPServer is the local server's listener: headers within 10 s, the
// whole request within readTimeout, idle connections closed after a minute.
func newHTTPServer(h http.Handler, readTimeout time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: readTimeout, IdleTimeout: time.Minute}
}

// lingering is a listener whose connections close gracefully: a server
// that answers early (a 413 for a body over the limit) and closes while
// the client is still sending would otherwise reset the connection, and a
// client that sends its whole body before reading (Python's, curl's) would
// see the reset, not the answer. Closing sends the end of our side, then
// reads and discards what the client still sends, up to lingerBytes and
// while it keeps coming (lingerIdle apart), before closing for good.
type lingering struct{ net.Listener }

const (
	lingerBytes = 64 << 20
	lingerIdle  = 10 * time.Second
)

func (l lingering) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, err
}

type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

// Close returns at once; the draining happens on its own goroutine.
func (c *lingerConn) Close() error {
	c.once.Do(func() {
		_ = c.TCPConn.CloseWrite() // the server may have done so already
		go func() {
			defer c.TCPConn.Close()
			buf := make([]byte, 64<<10)
			for left := lingerBytes; left > 0; {
				_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerIdle))
				n, err := c.TCPConn.Read(buf)
				left -= n
				if err != nil {
					return
				}
			}
		}()
	})
	return nil
}
