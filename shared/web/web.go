package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/store"
)

// Web is the web app.
type Web struct {
	Store *store.Store
	// Queues is the merge queue's driver: its views of queues (pending
	// commands applied) and the commands the pages' actions record.
	Queues *queuesvc.Service
	// Health sets quarantine overrides, as the administration program does.
	Health *healthsvc.Service
	Viewer healthview.Viewer
	Now    func() time.Time
	Log    *slog.Logger
	// Hosts are the git hosts a queue's page may be on, tried in order:
	// the pages' addresses (queuesvc.Service.DetailsURL) name none.
	Hosts []string
	// GitHubWeb is the web address of the GitHub that serves Hosts
	// (config GitHubWebURL), where links to pull requests and commits go.
	GitHubWeb string
	// SignInFailures limits failed sign-ins per client address, as the API
	// limits failed authentications (nil: no limit).
	SignInFailures *api.FailureLimiter
	// Auth checks a session's token: at sign-in, and on every page, so
	// that a revoked token ends its sessions within the cache's time, as
	// it stops working for the API; and whether the session was signed
	// out.
	Auth *api.CachedAuth
	// GitHub is "Sign in with GitHub": the GitHub App's user authorization
	// (githubsignin.go); nil when the deployment has no App client.
	GitHub *GitHubSignIn
	// TestsPerIndex and ReposPerPage size the pages of the test list (the
	// entries read of each of its indexes) and of an organization's home;
	// 0 is listLimit and maxRepos. Tests lower them to page through a few.
	TestsPerIndex, ReposPerPage int

	sessions sessions
}

// Setup is what New builds the app from.
type Setup struct {
	Config config.Config
	Store  *store.Store
	Now    func() time.Time
	Log    *slog.Logger
	// Auth and SignInFailures are the API's (api.Server's): a session's
	// token is checked, and failed sign-ins counted, as the API's are.
	Auth           *api.CachedAuth
	SignInFailures *api.FailureLimiter
	Queues         *queuesvc.Service
	Health         *healthsvc.Service
}

// New builds the web app.
func New(s Setup) *Web {
	cfg := s.Config
	hosts := []string{"github.com"}
	if h := config.EnterpriseHost(cfg.GitHubAPIURL); h != "" {
		hosts = append(hosts, h)
	}
	return &Web{
		Store: s.Store, Queues: s.Queues, Health: s.Health, Viewer: healthview.Viewer{PublicAppURL: cfg.PublicAppURL},
		Now: s.Now, Log: s.Log,
		Hosts: hosts, GitHubWeb: cfg.GitHubWebURL, SignInFailures: s.SignInFailures, Auth: s.Auth,
		GitHub: newGitHubSignIn(cfg),
		sessions: sessions{
			secret: func(ctx context.Context) ([]byte, error) { return cfg.Secrets.Secret(ctx, config.SecretWebSession) },
			secure: strings.HasPrefix(cfg.PublicAppURL, "https://"),
			now:    s.Now,
		},
	}
}

// Handler serves every page. Paths under /v1 are the API's: one that
// reaches the app names no endpoint, and is answered as the API answers.
func (w *Web) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", w.root)
	mux.HandleFunc("GET /signin", w.signInForm)
	mux.HandleFunc("POST /signin", w.signIn)
	mux.HandleFunc("GET /signin/github", w.gitHubSignIn)
	mux.HandleFunc("GET /signin/github/callback", w.gitHubCallback)
	mux.HandleFunc("GET /github/setup", w.gitHubSetup)
	mux.HandleFunc("POST /signout", w.action(w.signOut))
	mux.HandleFunc("GET /{org}", w.page(w.orgHome))
	mux.HandleFunc("GET /{org}/merge-queue/{owner}/{name}/{rest...}", w.page(w.queueOrPR))
	mux.HandleFunc("POST /{org}/merge-queue/{owner}/{name}/{rest...}", w.action(w.queueAction))
	mux.HandleFunc("GET /{org}/flaky-tests", w.page(w.testList))
	mux.HandleFunc("GET /{org}/flaky-tests/test/{id}", w.page(w.testPage))
	mux.HandleFunc("POST /{org}/flaky-tests/test/{id}", w.action(w.setOverride))
	mux.HandleFunc("GET /{org}/uploads/{id}", w.page(w.uploadPage))
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		w.fail(rw, r, errs.E(errs.NotFound, "no page %s", r.URL.Path))
	})
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/") {
			api.WriteError(rw, r, errs.E(errs.NotFound, "no endpoint %s", strings.TrimSuffix(r.URL.Path, "/")))
			return
		}
		h := rw.Header()
		// No script runs on any page, nothing is framed, forms post here.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if w.sessions.secure {
			// Served over https: browsers keep to it for a year, so the
			// session cookie never travels in the clear.
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		mux.ServeHTTP(rw, r)
	})
}

// pageFunc renders one page for a signed-in person of the path's
// organization.
type pageFunc func(w http.ResponseWriter, r *http.Request, s session) error

// page runs fn for a signed-in person of the path's organization: without
// a valid session it sends them to sign in, and another organization's
// pages are not found, exactly as absent ones. A token must have the read
// scope to see any page.
func (w *Web) page(fn pageFunc) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		s, ok := w.signedIn(rw, r)
		if !ok {
			return
		}
		if org := r.PathValue("org"); org != "" {
			i := slices.IndexFunc(s.Orgs, func(o string) bool { return strings.EqualFold(o, org) })
			if i < 0 {
				w.fail(rw, r, errs.E(errs.NotFound, "no organization %q for this session", org))
				return
			}
			s.Org = s.Orgs[i]
		}
		api.NoteOrg(r.Context(), s.Org)
		if s.Login == "" {
			if err := s.principal.Require(api.ScopeRead, "Seeing the web app"); err != nil {
				w.fail(rw, r, err)
				return
			}
		}
		if err := fn(rw, r, s); err != nil {
			w.fail(rw, r, err)
		}
	}
}

// action is page for a form's POST: its CSRF token must be the session's
// (403 otherwise, before anything is done).
func (w *Web) action(fn pageFunc) http.HandlerFunc {
	return w.page(func(rw http.ResponseWriter, r *http.Request, s session) error {
		r.Body = http.MaxBytesReader(rw, r.Body, 64<<10)
		ok, err := w.sessions.checkCSRF(r, s)
		if err != nil {
			return err
		}
		if !ok {
			return errForbidden
		}
		return fn(rw, r, s)
	})
}

var errForbidden = errs.E(errs.Forbidden, "this form has expired or did not come from this site; go back, reload the page and try again")

// signedIn is the request's session; without one it redirects to the
// sign-in form, which comes back here once signed in.
func (w *Web) signedIn(rw http.ResponseWriter, r *http.Request) (session, bool) {
	s, ok, err := w.valid(r)
	if err != nil {
		w.fail(rw, r, err)
		return session{}, false
	}
	if !ok {
		if _, err := r.Cookie(w.sessions.name()); err == nil {
			w.sessions.end(rw) // signed out, expired, or its token revoked
		}
		next := r.URL.RequestURI()
		if r.Method != http.MethodGet {
			next = r.URL.Path
		}
		http.Redirect(rw, r, "/signin?next="+url.QueryEscape(next), http.StatusSeeOther)
		return session{}, false
	}
	api.NoteOrg(r.Context(), s.Org)
	return s, true
}

// valid is the request's session while it holds: not signed out, and
// signed in with a token that still holds and is still the
// organization's. The checks are the auth cache's: a GetItem each at most
// every AUTH_CACHE_SECONDS per copy.
func (w *Web) valid(r *http.Request) (session, bool, error) {
	s, ok, err := w.sessions.read(r)
	if err != nil || !ok {
		return session{}, false, err
	}
	revoked, err := w.Auth.SessionRevoked(r.Context(), s.ID())
	if err != nil || revoked {
		return session{}, false, err
	}
	if s.Login != "" {
		return s, true, nil
	}
	p, err := w.Auth.AuthenticateHash(r.Context(), s.Token)
	switch {
	case errs.Is(err, errs.Unauthorized) || err == nil && p.Org != s.Org:
		return session{}, false, nil
	case err != nil:
		return session{}, false, err
	}
	s.principal = p
	return s, true, nil
}

// root sends a person to their organization's home, or to sign in.
func (w *Web) root(rw http.ResponseWriter, r *http.Request) {
	if s, ok := w.signedIn(rw, r); ok {
		http.Redirect(rw, r, "/"+url.PathEscape(s.Org), http.StatusSeeOther)
	}
}

// fail answers err as a page: its status and a sentence a person can act
// on; an internal error's cause stays in the log line.
func (w *Web) fail(rw http.ResponseWriter, r *http.Request, err error) {
	api.NoteError(r.Context(), err)
	status, msg := http.StatusInternalServerError, "Something went wrong on our side (request id "+api.RequestID(r.Context())+")."
	switch errs.CodeOf(err) {
	case errs.NotFound:
		status, msg = http.StatusNotFound, "There is no such page, or it belongs to another organization."
	case errs.Invalid:
		status, msg = http.StatusBadRequest, errs.MessageOf(err)
	case errs.Forbidden:
		status, msg = http.StatusForbidden, errs.MessageOf(err)
	case errs.Conflict:
		status, msg = http.StatusConflict, errs.MessageOf(err)
	case errs.RateLimited:
		status, msg = http.StatusTooManyRequests, "Too many attempts from this address; wait a minute and try again."
	case errs.Unavailable:
		status, msg = http.StatusServiceUnavailable, "The service is busy or unreachable; try again in a few seconds."
	}
	var s *session
	if got, ok, _ := w.sessions.read(r); ok {
		if org := r.PathValue("org"); slices.Contains(got.Orgs, org) {
			got.Org = org
		}
		s = &got
	}
	title := http.StatusText(status)
	if rerr := w.render(rw, r, status, s, view{Title: title}, errorPage{msg}); rerr != nil {
		http.Error(rw, msg, status)
	}
}
