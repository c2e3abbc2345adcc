package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// t0 is the fixed clock of every golden file.
var t0 = time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC)

const testID = "06cb6db5-f807-5198-b072-af67a0636f8a"

// harness is the whole service on a fresh table, with two tenants:
// "acme" (github.com/Acme/web with Jira, github.com/acme/api with Linear,
// gitlab.com/acme/plain with no tracker) and "other" (github.com/other/web).
type harness struct {
	*testkit.Clock
	app    *app.App
	logs   *testkit.SyncBuffer
	tokens map[string]string // placeholder → secret
}

func newHarness(tb testing.TB, tweak func(*config.Config)) *harness {
	tb.Helper()
	db, table := storetest.NewTable(tb)
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TABLE_NAME": table, "PUBLIC_APP_URL": "https://app.mainguard.test", "RATE_LIMIT_RPS": "0"}[k]
	})
	if err != nil {
		tb.Fatal(err)
	}
	if tweak != nil {
		tweak(&cfg)
	}
	h := &harness{Clock: testkit.NewClock(t0), logs: &testkit.SyncBuffer{}, tokens: map[string]string{}}
	h.app, err = app.New(context.Background(), cfg, app.Options{
		DB:    db,
		Log:   slog.New(slog.NewJSONHandler(h.logs, nil)),
		Now:   h.Now,
		NewID: testkit.Numbered("msg_%04d"),
		// Queue, entry and run ids: uuids, numbered so golden files hold.
		NewUUID: testkit.UUIDs(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	h.seed(tb)
	return h
}

// newHarnessOn builds a second app on base's table and data through db.
func newHarnessOn(tb testing.TB, base *harness, db store.DB) *harness {
	tb.Helper()
	h := &harness{Clock: testkit.NewClock(base.Now()), logs: &testkit.SyncBuffer{}, tokens: base.tokens}
	var err error
	h.app, err = app.New(context.Background(), base.app.Config, app.Options{
		DB: db, Log: slog.New(slog.NewJSONHandler(h.logs, nil)), Now: h.Now,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func ptr(s string) *string { return &s }

func (h *harness) seed(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	s := h.app.Store
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	for _, org := range []string{"acme", "other"} {
		_, err := s.CreateOrg(ctx, org, "")
		must(err)
		secret, _, err := s.CreateToken(ctx, org)
		must(err)
		h.tokens["{{TOKEN}}"+map[string]string{"acme": "", "other": "_OTHER"}[org]] = secret
	}
	// A fixed page-token secret keeps the tokens in golden files stable.
	_, err := s.Secret(ctx, "page-token", func() []byte { return []byte("golden-page-token-secret-32bytes") })
	must(err)
	revoked, _, err := s.CreateToken(ctx, "acme")
	must(err)
	_, err = s.RevokeToken(ctx, "acme", revoked)
	must(err)
	h.tokens["{{REVOKED_TOKEN}}"] = revoked
	// Tokens that can do one job: an uploader's, a reader's.
	for placeholder, scope := range map[string]string{"{{UPLOAD_TOKEN}}": "upload", "{{READ_TOKEN}}": "read"} {
		secret, _, err := s.CreateScopedToken(ctx, "acme", []string{scope})
		must(err)
		h.tokens[placeholder] = secret
	}

	web := repository.Ref{Host: "github.com", Owner: "Acme", Name: "web"}
	_, err = s.UpdateRepo(ctx, "acme", web, store.RepoSettings{JiraBaseURL: ptr("https://acme.atlassian.net/")})
	must(err)
	apiRepo := repository.Ref{Host: "github.com", Owner: "acme", Name: "api"}
	// The api repository quarantines (automatically, the default).
	on := true
	_, err = s.UpdateRepo(ctx, "acme", apiRepo, store.RepoSettings{LinearWorkspace: ptr("acme"), Health: testhealth.HealthSettings{QuarantineEnabled: &on}})
	must(err)
	plain := repository.Ref{Host: "gitlab.com", Owner: "acme/group", Name: "plain"}
	_, err = s.UpdateRepo(ctx, "acme", plain, store.RepoSettings{})
	must(err)
	otherRepo := repository.Ref{Host: "github.com", Owner: "other", Name: "web"}
	_, err = s.UpdateRepo(ctx, "other", otherRepo, store.RepoSettings{JiraBaseURL: ptr("https://other.atlassian.net")})
	must(err)

	for _, r := range []struct {
		org  string
		repo repository.Ref
	}{{"acme", web}, {"acme", apiRepo}, {"acme", plain}, {"other", otherRepo}} {
		must(s.PutTestCase(ctx, sampleTest(r.org, r.repo)))
	}
	// Each organization owns its GitHub repositories: only it runs merge
	// queues on them (no GitHub App here, so by an administrator's claim).
	for _, r := range []struct {
		org  string
		repo repository.Ref
	}{{"acme", web}, {"acme", apiRepo}, {"other", otherRepo}} {
		_, err := s.ClaimRepo(ctx, r.org, r.repo.Owner, r.repo.Name, false)
		must(err)
	}
}

// seedQueues makes the merge-queue state the golden files read (only
// they: other tests build their own queues), through
// the endpoints themselves (no GitHub is configured, so submitted pull
// requests stay NOT_READY): acme's github.com/Acme/web has a queue on main
// with pull requests 7 (high), 8 and 9 (urgent, noBatch), and an empty one
// on release of github.com/acme/api; other's github.com/other/web has a
// queue on main with pull request 1.
func (h *harness) seedQueues(tb testing.TB) {
	tb.Helper()
	repo := func(owner, name string) map[string]string {
		return map[string]string{"host": "github.com", "owner": owner, "name": name}
	}
	calls := []struct {
		fn, token string
		body      map[string]any
	}{
		{"create-queue", "{{TOKEN}}", map[string]any{"repo": repo("Acme", "web"), "targetBranch": "main", "concurrency": 2}},
		{"submit-pull-request", "{{TOKEN}}", map[string]any{"repo": repo("Acme", "web"), "targetBranch": "main", "pr": map[string]any{"number": 7}, "priority": "high"}},
		{"submit-pull-request", "{{TOKEN}}", map[string]any{"repo": repo("Acme", "web"), "targetBranch": "main", "pr": map[string]any{"number": 8}}},
		{"submit-pull-request", "{{TOKEN}}", map[string]any{"repo": repo("Acme", "web"), "targetBranch": "main", "pr": map[string]any{"number": 9}, "priority": 0, "noBatch": true}},
		{"create-queue", "{{TOKEN}}", map[string]any{"repo": repo("acme", "api"), "targetBranch": "release"}},
		{"create-queue", "{{TOKEN}}_OTHER", map[string]any{"repo": repo("other", "web"), "targetBranch": "main"}},
		{"submit-pull-request", "{{TOKEN}}_OTHER", map[string]any{"repo": repo("other", "web"), "targetBranch": "main", "pr": map[string]any{"number": 1}}},
	}
	for _, c := range calls {
		path := map[string]string{"create-queue": "/createQueue", "submit-pull-request": "/submitPullRequest"}[c.fn]
		ev := event(path, c.body)
		ev.Headers["x-api-token"] = c.token
		if resp := h.call(tb, c.fn, ev); resp.StatusCode != 200 {
			tb.Fatalf("seed %s %v: %d %s", c.fn, c.body, resp.StatusCode, resp.Body)
		}
	}
}

// sampleTest is a flaky test with history: 24 h: 4 passed, 1 failed;
// 7 d: 10 passed, 3 failed; two failure clusters and two failing PRs in 7 d.
func sampleTest(org string, repo repository.Ref) testhealth.TestCase {
	hour := func(d time.Duration) string { return testhealth.HourKey(t0.Add(-d)) }
	day := func(d time.Duration) string { return testhealth.DayKey(t0.Add(-d)) }
	return testhealth.TestCase{
		Org: org, Repo: repo, ID: testID,
		Name: "example_name", FilePath: "src/lib.rs", Parent: "parent/fact/path", Classname: "ExampleClass",
		Status: testhealth.TestStatus{
			Value: "flaky", Reason: "pass-on-retry: failed and passed on commit 1a2b3c4 (main)",
			Timestamp: t0.Add(-26 * time.Hour),
		},
		Flake:        &testhealth.FlakeEvidence{At: t0.Add(-26 * time.Hour), SHA: "1a2b3c4d5e6f", Branch: "main"},
		FirstSeen:    t0.Add(-10 * 24 * time.Hour),
		PassedByHour: map[string]int{hour(time.Hour): 4, hour(3 * 24 * time.Hour): 6, hour(9 * 24 * time.Hour): 40},
		FailedByHour: map[string]int{hour(2 * time.Hour): 1, hour(3 * 24 * time.Hour): 2, hour(9 * 24 * time.Hour): 40},
		Failures: map[string]testhealth.FailureCluster{
			"a": {Summary: "connection refused to 10.0.0.7:5432", Last: t0.Add(-2 * time.Hour), ByDay: map[string]int{day(2 * time.Hour): 1, day(3 * 24 * time.Hour): 1}},
			"b": {Summary: "expected 200, got 503", Last: t0.Add(-3 * 24 * time.Hour), ByDay: map[string]int{day(3 * 24 * time.Hour): 1}},
			"c": {Summary: "old failure", Last: t0.Add(-9 * 24 * time.Hour), ByDay: map[string]int{day(9 * 24 * time.Hour): 40}},
		},
		FailedPRs:  map[string]time.Time{"41": t0.Add(-2 * time.Hour), "42": t0.Add(-3 * 24 * time.Hour), "7": t0.Add(-9 * 24 * time.Hour)},
		Codeowners: []string{"@acme/web-team", "dev@acme.example"},
	}
}

// call runs the named function exactly as Lambda would, with the event's
// token placeholders replaced.
func (h *harness) call(tb testing.TB, name string, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	tb.Helper()
	fn, err := h.app.Function(name)
	if err != nil {
		tb.Fatal(err)
	}
	if tok, ok := ev.Headers["x-api-token"]; ok {
		if secret, ok := h.tokens[tok]; ok {
			ev.Headers["x-api-token"] = secret
		}
	}
	resp, err := fn(context.Background(), ev)
	if err != nil {
		tb.Fatalf("%s: the adapter returned an error: %v", name, err)
	}
	return resp
}

// event builds a POST event for path with a JSON body and acme's token.
func event(path string, body any) events.APIGatewayV2HTTPRequest {
	b, _ := json.Marshal(body)
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /v1" + path, RawPath: "/v1" + path, Body: string(b),
		Headers: map[string]string{"content-type": "application/json", "x-api-token": "{{TOKEN}}"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "req-test",
			HTTP:      events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1" + path},
		},
	}
}
