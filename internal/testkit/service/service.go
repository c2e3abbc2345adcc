// Package service is the whole service for end-to-end tests: app.App on a
// fresh DynamoDB Local table, a simulated GitHub holding the repositories a
// test names (main protected by the required status "ci"), a CI that
// judges the queue's test branches, organizations with a token each (each
// repository claimed for one of them), a
// clock the test drives and numbered uuids. The merge-queue and metrics
// tests build theirs here.
package service

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

// Options say what the service holds.
type Options struct {
	Start time.Time // the clock's start
	Repos []string  // owner/name of the simulated GitHub's repositories
	Orgs  []string  // organizations, each with a token
	// Env is added to the configuration's environment (TABLE_NAME, the
	// GitHub address and token are set).
	Env map[string]string
	// Owner is the organization each of Repos is claimed for, but those
	// whose GitHub owner is named like an organization of Orgs, which are
	// that one's (default the first of Orgs): only its owner runs merge
	// queues on a repository.
	Owner string
	// App makes the simulated GitHub know a GitHub App (its installations
	// and user authorization); Env then names it (GITHUB_APP_ID, …).
	App *githubsim.App
}

// Service is one running service.
type Service struct {
	App    *app.App
	Sim    *githubsim.Server
	CI     *githubsim.CI // reports "ci" on the queue's test branches
	Mux    http.Handler
	Clock  *testkit.Clock
	DB     store.DB
	Table  string
	Tokens map[string]string // organization → token
}

// New starts a service as opt says; everything stops when tb ends.
func New(tb testing.TB, opt Options) *Service {
	tb.Helper()
	s := &Service{Clock: testkit.NewClock(opt.Start), Tokens: map[string]string{}}
	sim, err := githubsim.New(tb.TempDir(), githubsim.Options{Now: s.Clock.Now, App: opt.App})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sim.Close() })
	s.Sim, s.CI = sim, &githubsim.CI{Sim: sim, Context: "ci"}
	for _, full := range opt.Repos {
		if _, err := sim.CreateRepo(full, "main"); err != nil {
			tb.Fatal(err)
		}
		if err := sim.SetRequiredStatusChecks(full, "main", []string{"ci"}); err != nil {
			tb.Fatal(err)
		}
	}
	s.DB, s.Table = storetest.NewTable(tb)
	vars := map[string]string{"TABLE_NAME": s.Table, "RATE_LIMIT_RPS": "0", "GITHUB_API_URL": sim.URL(), "GITHUB_TOKEN": "local"}
	for k, v := range opt.Env {
		vars[k] = v
	}
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		tb.Fatal(err)
	}
	s.App, err = app.New(context.Background(), cfg, app.Options{
		DB: s.DB, Now: s.Clock.Now, Log: slog.New(slog.DiscardHandler), NewUUID: testkit.UUIDs(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	s.Mux = s.App.Mux()
	for _, org := range opt.Orgs {
		if _, err := s.App.Store.CreateOrg(context.Background(), org, ""); err != nil {
			tb.Fatal(err)
		}
		if s.Tokens[org], _, err = s.App.Store.CreateToken(context.Background(), org); err != nil {
			tb.Fatal(err)
		}
	}
	owner := opt.Owner
	if owner == "" && len(opt.Orgs) > 0 {
		owner = opt.Orgs[0]
	}
	for _, full := range opt.Repos {
		o, n, _ := strings.Cut(full, "/")
		org := owner
		if slices.Contains(opt.Orgs, o) {
			org = o
		}
		if _, err := s.App.Store.ClaimRepo(context.Background(), org, o, n, false); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// Post POSTs body, a JSON document, to /v1/{path} as org and returns the
// status and the response body.
func (s *Service) Post(org, path string, body []byte) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/v1/"+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-token", s.Tokens[org])
	w := httptest.NewRecorder()
	s.Mux.ServeHTTP(w, req)
	out, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(out)
}
