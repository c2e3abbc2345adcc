package store_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var t0 = time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC)

func fixed() time.Time { return t0 }

func mustOrg(t *testing.T, s *store.Store, slug string) {
	t.Helper()
	if _, err := s.CreateOrg(context.Background(), slug, ""); err != nil {
		t.Fatal(err)
	}
}

func TestOrgCreateIsConditional(t *testing.T) {
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "acme")
	if _, err := s.CreateOrg(ctx, "acme", "Again"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("second create: got %v, want conflict", err)
	}
	o, err := s.GetOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "acme" || !o.CreatedAt.Equal(t0) {
		t.Errorf("got %+v", o)
	}
	for _, bad := range []string{"", "Acme", "a b", "-x", strings.Repeat("a", 64)} {
		if _, err := s.CreateOrg(ctx, bad, ""); !errs.Is(err, errs.Invalid) {
			t.Errorf("slug %q: got %v, want invalid", bad, err)
		}
	}
	if _, err := s.GetOrg(ctx, "nope"); !errs.Is(err, errs.NotFound) {
		t.Errorf("absent org: got %v", err)
	}
}

func TestTokenLifecycle(t *testing.T) {
	now := t0
	s := storetest.New(t, func() time.Time { return now })
	ctx := context.Background()
	mustOrg(t, s, "acme")
	mustOrg(t, s, "other")

	secret, tok, err := s.CreateToken(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "mg_") || len(secret) != 46 {
		t.Errorf("token %q: want mg_ and 43 base62 characters", secret)
	}
	if strings.Contains(tok.Hash, secret) || tok.Hash != store.HashToken(secret) {
		t.Errorf("stored hash %q is not the SHA-256 of the token", tok.Hash)
	}
	org, err := s.Authenticate(ctx, secret)
	if err != nil || org != "acme" {
		t.Fatalf("authenticate: %q, %v", org, err)
	}
	if _, err := s.Authenticate(ctx, secret+"x"); !errs.Is(err, errs.Unauthorized) {
		t.Errorf("unknown token: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, "ghost"); !errs.Is(err, errs.NotFound) {
		t.Errorf("token for absent org: %v", err)
	}
	// Another org cannot revoke it, by id or by secret.
	if _, err := s.RevokeToken(ctx, "other", tok.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("revoke from other org by id: %v", err)
	}
	if _, err := s.RevokeToken(ctx, "other", secret); !errs.Is(err, errs.NotFound) {
		t.Errorf("revoke from other org by secret: %v", err)
	}
	now = t0.Add(time.Hour)
	rt, err := s.RevokeToken(ctx, "acme", tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rt.Revoked() || !rt.RevokedAt.Equal(now) {
		t.Errorf("revoked token: %+v", rt)
	}
	if _, err := s.Authenticate(ctx, secret); !errs.Is(err, errs.Unauthorized) {
		t.Errorf("revoked token authenticates: %v", err)
	}
	toks, err := s.ListTokens(ctx, "acme")
	if err != nil || len(toks) != 1 || toks[0].ID != tok.ID || !toks[0].Revoked() {
		t.Errorf("list: %+v %v", toks, err)
	}
}

func TestAddTokenIsIdempotentPerOrg(t *testing.T) {
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "local")
	mustOrg(t, s, "other")
	a, err := s.AddToken(ctx, "local", "mg_bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AddToken(ctx, "local", "mg_bootstrap")
	if err != nil || b.ID != a.ID {
		t.Fatalf("second add: %+v %v", b, err)
	}
	if _, err := s.AddToken(ctx, "other", "mg_bootstrap"); !errs.Is(err, errs.Conflict) {
		t.Errorf("same token for another org: %v", err)
	}
}

func TestRepoKeysAndSettings(t *testing.T) {
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "acme")
	first := store.RepoRef{Host: "GitHub.com", Owner: "Acme", Name: "Web"}
	jira := "https://acme.atlassian.net"
	if _, err := s.UpdateRepo(ctx, "acme", first, store.RepoSettings{JiraBaseURL: &jira}); err != nil {
		t.Fatal(err)
	}
	branch := "trunk"
	r, err := s.UpdateRepo(ctx, "acme", store.RepoRef{Host: "github.com", Owner: "acme", Name: "web"}, store.RepoSettings{DefaultBranch: &branch})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Repo{Org: "acme", Ref: first, JiraBaseURL: jira, DefaultBranch: "trunk", CreatedAt: t0}
	if d := cmp.Diff(r, want); d != "" {
		t.Errorf("repo (-got +want):\n%s", d)
	}
	empty := ""
	r, err = s.UpdateRepo(ctx, "acme", first, store.RepoSettings{JiraBaseURL: &empty})
	if err != nil || r.JiraBaseURL != "" || r.Branch() != "trunk" {
		t.Errorf("clear jira: %+v %v", r, err)
	}
	// GitLab paths keep their case: a different spelling is another repository.
	gl := store.RepoRef{Host: "gitlab.com", Owner: "Group/Sub", Name: "App"}
	if _, err := s.UpdateRepo(ctx, "acme", gl, store.RepoSettings{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRepo(ctx, "acme", store.RepoRef{Host: "GITLAB.com", Owner: "group/sub", Name: "app"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("gitlab lookup ignoring case: %v", err)
	}
	if _, err := s.GetRepo(ctx, "acme", store.RepoRef{Host: "GITLAB.com", Owner: "Group/Sub", Name: "App"}); err != nil {
		t.Errorf("gitlab lookup with host case changed: %v", err)
	}
	if _, err := s.GetRepo(ctx, "other", first); !errs.Is(err, errs.NotFound) {
		t.Errorf("other org sees repo: %v", err)
	}
	if _, err := s.UpdateRepo(ctx, "ghost", first, store.RepoSettings{}); !errs.Is(err, errs.NotFound) {
		t.Errorf("repo of absent org: %v", err)
	}
}

func TestParseRepo(t *testing.T) {
	for in, want := range map[string]store.RepoRef{
		"github.com/acme/web":           {Host: "github.com", Owner: "acme", Name: "web"},
		"gitlab.example.com/a/b/c/proj": {Host: "gitlab.example.com", Owner: "a/b/c", Name: "proj"},
	} {
		got, err := store.ParseRepo(in)
		if err != nil || got != want {
			t.Errorf("ParseRepo(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "github.com", "github.com/acme", "/acme/web", "github.com//web", "github.com/acme/"} {
		if _, err := store.ParseRepo(bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("ParseRepo(%q): %v", bad, err)
		}
	}
}

func sampleTest(org string, repo store.RepoRef) store.TestCase {
	return store.TestCase{
		Org: org, Repo: repo, ID: "06cb6db5-f807-5198-b072-af67a0636f8a", Name: "example_name",
		Status:       store.TestStatus{Value: "healthy", Reason: "no failures", Timestamp: t0},
		FirstSeen:    t0,
		PassedByHour: map[string]int{"493473": 3},
		FailedByHour: map[string]int{"493473": 1},
		Failures:     map[string]store.FailureCluster{"k": {Summary: "boom", Last: t0, ByDay: map[string]int{"20657": 1}}},
		FailedPRs:    map[string]time.Time{"12": t0},
		Codeowners:   []string{"@acme/web"},
	}
}

func TestTestCaseReadIsOneGetItemAndTenantScoped(t *testing.T) {
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := store.RepoRef{Host: "github.com", Owner: "Acme", Name: "web"}
	tc := sampleTest("acme", repo)
	if err := s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	uctx, usage := store.WithUsage(ctx)
	got, err := s.GetTestCase(uctx, "acme", store.RepoRef{Host: "github.com", Owner: "acme", Name: "WEB"}, strings.ToUpper(tc.ID))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, tc); d != "" {
		t.Errorf("round trip (-got +want):\n%s", d)
	}
	if calls, capacity := usage.Snapshot(); calls != 1 || capacity <= 0 {
		t.Errorf("usage: %d calls, %v capacity; want 1 call with capacity", calls, capacity)
	}
	if _, err := s.GetTestCase(ctx, "other", repo, tc.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("other org: %v", err)
	}
	if _, err := s.GetTestCase(ctx, "acme", store.RepoRef{Host: "github.com", Owner: "acme", Name: "api"}, tc.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("other repo: %v", err)
	}
}

func TestLinkTicketWritesEventInSameTransaction(t *testing.T) {
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := store.RepoRef{Host: "github.com", Owner: "acme", Name: "web"}
	tc := sampleTest("acme", repo)
	if err := s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	ticket := store.Ticket{ID: "KAN-1", HTMLURL: "https://acme.atlassian.net/browse/KAN-1"}
	ev := store.Event{ID: "evt_1", Type: "test_case.ticket_linked", Payload: `{}`, CreatedAt: t0}
	if err := s.LinkTicket(ctx, "acme", repo, tc.ID, ticket, ev); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTestCase(ctx, "acme", repo, tc.ID)
	if err != nil || got.Ticket == nil || *got.Ticket != ticket {
		t.Fatalf("ticket: %+v %v", got.Ticket, err)
	}
	// The same event id again is refused: the outbox never holds duplicates,
	// and the failed transaction leaves the ticket as it was.
	other := store.Ticket{ID: "KAN-2", HTMLURL: "x"}
	if err := s.LinkTicket(ctx, "acme", repo, tc.ID, other, ev); !errs.Is(err, errs.Conflict) {
		t.Fatalf("duplicate event id: got %v, want conflict", err)
	}
	if got, _ := s.GetTestCase(ctx, "acme", repo, tc.ID); got.Ticket.ID != "KAN-1" {
		t.Errorf("ticket changed by a failed transaction: %+v", got.Ticket)
	}
	// An absent test: NotFound, and no event written.
	ev2 := store.Event{ID: "evt_2", Type: "test_case.ticket_linked", Payload: `{}`, CreatedAt: t0}
	if err := s.LinkTicket(ctx, "acme", repo, "3f507aef-e834-523b-a8ad-edaba6b137be", ticket, ev2); !errs.Is(err, errs.NotFound) {
		t.Errorf("absent test: %v", err)
	}
	evs, err := s.PendingEvents(ctx, "acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID != "evt_1" || evs[0].Type != "test_case.ticket_linked" {
		t.Errorf("outbox: %+v", evs)
	}
}

func TestExcessClustersKeepsTheMostRecent(t *testing.T) {
	tc := store.TestCase{Failures: map[string]store.FailureCluster{}}
	for i := range store.MaxClusters + 3 {
		tc.Failures[fmt.Sprintf("k%02d", i)] = store.FailureCluster{
			Summary: "f", Last: t0.Add(time.Duration(i) * time.Minute), ByDay: map[string]int{"20657": 1},
		}
	}
	// The three oldest clusters (k00, k01, k02) go, each with its three attributes.
	want := []string{"cc.k00.20657", "cc.k01.20657", "cc.k02.20657", "cl.k00", "cl.k01", "cl.k02", "cs.k00", "cs.k01", "cs.k02"}
	if d := cmp.Diff(tc.ExcessClusters(), want); d != "" {
		t.Errorf("(-got +want):\n%s", d)
	}
	delete(tc.Failures, "k00")
	delete(tc.Failures, "k01")
	delete(tc.Failures, "k02")
	if got := tc.ExcessClusters(); got != nil {
		t.Errorf("at the bound: %v", got)
	}
}
