package githubsim

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Options configure a Server. The zero value is a server without
// authentication, with the wall clock and random delivery ids.
type Options struct {
	// Now is the server's clock: commit dates, timestamps, rate-limit resets
	// and token expiry all come from it.
	Now func() time.Time
	// NewID returns webhook delivery ids (X-GitHub-Delivery).
	NewID func() string
	// Token, when set, is a bearer token the REST endpoints accept.
	Token string
	// App, when set, enables the GitHub App endpoints and the installation
	// tokens they issue. With neither Token nor App, requests need no token.
	App *App
	// WebhookURL and WebhookSecret, when set, make the server deliver
	// webhooks for its own state changes (see SetWebhook).
	WebhookURL    string
	WebhookSecret string
	// HTTPClient sends webhook deliveries; default a client with a 10 s timeout.
	HTTPClient *http.Client
	// BaseURL is the address URL reports (and response links use) for a
	// server made with NewUnstarted and served by the caller.
	BaseURL string
}

// App describes the one GitHub App the server knows: JWTs must be signed by
// PublicKey's private key with iss = ID; every repository is installed under
// InstallationID, but those of an account Installations names, under its
// own; issued tokens last TokenTTL (default one hour, as GitHub).
// ClientID and ClientSecret are its OAuth client, for the user
// authorization flow (oauth.go), whose codes go to CallbackURL (or under
// it; anywhere when empty).
type App struct {
	ID             int64
	PublicKey      *rsa.PublicKey
	InstallationID int64
	TokenTTL       time.Duration

	Installations map[string]int64 // account login → installation id
	ClientID      string
	ClientSecret  string
	CallbackURL   string
}

// Server is a GitHub test server. All methods are safe for concurrent use.
type Server struct {
	dir  string
	opts Options
	now  func() time.Time
	srv  *httptest.Server

	mu       sync.Mutex
	repos    map[string]*repo // "owner/name", lower case
	nextID   int64
	tokens   map[string]time.Time // installation token → expiry
	faults   []*Fault
	requests []string // "METHOD path", for RequestCount
	hook     hookTarget
	closing  chan struct{}
	closed   bool
	strict   strictState // rate-limit windows, apps, organization rulesets (strict.go, rulesets.go)

	deliveries deliveryQueue
	manifests  manifests // Apps created from a manifest (manifest.go)
	oauth      oauth     // the user authorization flow (oauth.go)
}

type repo struct {
	id            int64
	owner, name   string
	defaultBranch string
	git           *gitRepo
	pulls         map[int]*pull
	nextPR        int
	statuses      map[string][]*status   // sha → in creation order
	checks        map[string][]*checkRun // sha → in creation order
	protection    map[string]*Protection // branch → classic branch protection
	rulesets      []*ruleset             // repository rulesets (rulesets.go)
	extra         *extras                // issues, comments, labels, permissions (issues.go)
}

type pull struct {
	id                   int64
	number               int
	title, author        string
	headRef, baseRef     string
	headSHA              string
	state                string // open, closed
	draft, merged        bool
	mergeCommitSHA       string
	mergedBy             string
	createdAt, updatedAt time.Time
	closedAt, mergedAt   *time.Time
	mergeableUnknown     bool
	// mergeableFor is the head and base (headSHA:baseSHA) GitHub last
	// computed mergeability for: until a read computes it for the current
	// pair, mergeable is null (mergegate.go).
	mergeableFor string
}

type status struct {
	id                                    int64
	sha, context, state, description, url string
	createdAt, updatedAt                  time.Time
	by                                    actor // who created it, and through which App
}

type checkRun struct {
	id                            int64
	sha, name, status, conclusion string
	detailsURL                    string
	startedAt                     time.Time
	completedAt                   *time.Time
	appID                         int64 // the App that created it (CIAppID from the control API)
	// Made through the REST API (checkruns.go): with what external id and
	// output.
	externalID, title, summary string
}

// New creates a server whose repositories live under dir (created if
// needed) and starts it on a loopback port. Close it when done.
func New(dir string, opts Options) (*Server, error) {
	s, err := NewUnstarted(dir, opts)
	if err != nil {
		return nil, err
	}
	s.srv = httptest.NewServer(s.Handler())
	return s, nil
}

// NewUnstarted creates a server without listening, for a program that serves
// Handler on an address of its choosing; URL is then Options.BaseURL.
func NewUnstarted(dir string, opts Options) (*Server, error) {
	if dir == "" {
		return nil, errors.New("githubsim: a directory is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("githubsim: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = func() string { return uuid.NewString() }
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.App != nil && opts.App.TokenTTL == 0 {
		opts.App.TokenTTL = time.Hour
	}
	s := &Server{
		dir:     dir,
		opts:    opts,
		now:     opts.Now,
		repos:   map[string]*repo{},
		tokens:  map[string]time.Time{},
		closing: make(chan struct{}),
		hook:    hookTarget{url: opts.WebhookURL, secret: opts.WebhookSecret},
	}
	s.strict.init(opts)
	s.deliveries.init(s)
	return s, nil
}

// URL is the base URL of the REST API, without a trailing slash.
func (s *Server) URL() string {
	if s.srv == nil {
		return strings.TrimSuffix(s.opts.BaseURL, "/")
	}
	return s.srv.URL
}

// Close stops the server, releases hanging requests and waits for pending
// webhook deliveries to finish. The repositories stay on disk.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
	}
	s.deliveries.close()
	// The repositories' long-lived git processes (refwriter.go,
	// objects.go) end with their stdin.
	s.mu.Lock()
	gits := make([]*gitRepo, 0, len(s.repos))
	for _, rp := range s.repos {
		gits = append(gits, rp.git)
	}
	s.mu.Unlock()
	for _, g := range gits {
		g.closeProcesses()
	}
	return nil
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

func repoKey(full string) string { return strings.ToLower(full) }

// lookup finds a repository by "owner/name" (case-insensitive, as GitHub).
func (s *Server) lookup(full string) (*repo, error) {
	r := s.repos[repoKey(full)]
	if r == nil {
		return nil, fmt.Errorf("githubsim: no repository %q", full)
	}
	return r, nil
}

func (r *repo) fullName() string { return r.owner + "/" + r.name }

func (s *Server) sig(name string) signature {
	if name == "" {
		name = "githubsim"
	}
	return signature{name: name, email: name + "@users.noreply.github.com", when: s.now().UTC()}
}

// sortedPulls lists a repository's pull requests by number.
func (r *repo) sortedPulls() []*pull {
	ps := make([]*pull, 0, len(r.pulls))
	for _, p := range r.pulls {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].number < ps[j].number })
	return ps
}

func (s *Server) repoDir(owner, name string) string {
	return filepath.Join(s.dir, owner, name+".git")
}
