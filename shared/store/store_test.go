package store_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
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
	t.Parallel()
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
	t.Parallel()
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
	got, err := s.Authenticate(ctx, secret)
	if err != nil || got.Org != "acme" || len(got.Scopes) != 1 || got.Scopes[0] != store.AdminScope {
		t.Fatalf("authenticate: %+v, %v", got, err)
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
	t.Parallel()
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
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	mustOrg(t, s, "acme")
	first := repository.Ref{Host: "GitHub.com", Owner: "Acme", Name: "Web"}
	jira := "https://acme.atlassian.net"
	if _, err := s.UpdateRepo(ctx, "acme", first, store.RepoSettings{JiraBaseURL: &jira}); err != nil {
		t.Fatal(err)
	}
	branch := "trunk"
	r, err := s.UpdateRepo(ctx, "acme", repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, store.RepoSettings{DefaultBranch: &branch})
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
	gl := repository.Ref{Host: "gitlab.com", Owner: "Group/Sub", Name: "App"}
	if _, err := s.UpdateRepo(ctx, "acme", gl, store.RepoSettings{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRepo(ctx, "acme", repository.Ref{Host: "GITLAB.com", Owner: "group/sub", Name: "app"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("gitlab lookup ignoring case: %v", err)
	}
	if _, err := s.GetRepo(ctx, "acme", repository.Ref{Host: "GITLAB.com", Owner: "Group/Sub", Name: "App"}); err != nil {
		t.Errorf("gitlab lookup with host case changed: %v", err)
	}
	if _, err := s.GetRepo(ctx, "other", first); !errs.Is(err, errs.NotFound) {
		t.Errorf("other org sees repo: %v", err)
	}
	if _, err := s.UpdateRepo(ctx, "ghost", first, store.RepoSettings{}); !errs.Is(err, errs.NotFound) {
		t.Errorf("repo of absent org: %v", err)
	}
}

func sampleTest(org string, repo repository.Ref) testhealth.TestCase {
	return testhealth.TestCase{
		Org: org, Repo: repo, ID: "06cb6db5-f807-5198-b072-af67a0636f8a", Name: "example_name",
		Status:       testhealth.TestStatus{Value: "healthy", Reason: "no failures", Timestamp: t0},
		FirstSeen:    t0,
		PassedByHour: map[string]int{"493473": 3},
		FailedByHour: map[string]int{"493473": 1},
		Failures:     map[string]testhealth.FailureCluster{"k": {Summary: "boom", Last: t0, ByDay: map[string]int{"20657": 1}}},
		FailedPRs:    map[string]time.Time{"12": t0},
		Codeowners:   []string{"@acme/web"},
	}
}

func TestTestCaseReadIsOneGetItemAndTenantScoped(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "Acme", Name: "web"}
	tc := sampleTest("acme", repo)
	if err := s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	uctx, usage := store.WithUsage(ctx)
	got, err := s.GetTestCase(uctx, "acme", repository.Ref{Host: "github.com", Owner: "acme", Name: "WEB"}, strings.ToUpper(tc.ID))
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
	if _, err := s.GetTestCase(ctx, "acme", repository.Ref{Host: "github.com", Owner: "acme", Name: "api"}, tc.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("other repo: %v", err)
	}
}

func TestLinkTicketWritesEventInSameTransaction(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	tc := sampleTest("acme", repo)
	if err := s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	ticket := testhealth.Ticket{ID: "KAN-1", HTMLURL: "https://acme.atlassian.net/browse/KAN-1"}
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
	other := testhealth.Ticket{ID: "KAN-2", HTMLURL: "x"}
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

// TestUpdateHealthRemovesWhatPruneDropped writes a test with counters
// that left every window and more clusters than are kept, prunes it as a
// health decision does, and reads back exactly the pruned test.
func TestUpdateHealthRemovesWhatPruneDropped(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	tc := sampleTest("acme", repo)
	old := t0.Add(-9 * testhealth.Day)
	tc.PassedByHour = map[string]int{testhealth.HourKey(t0): 2, testhealth.HourKey(old): 5}
	tc.MonitoredFailedByHour = map[string]int{testhealth.HourKey(old): 1}
	tc.FailedPRs = map[string]time.Time{"12": t0, "9": old}
	tc.Failures = map[string]testhealth.FailureCluster{}
	for i := range testhealth.MaxClusters + 3 {
		tc.Failures[fmt.Sprintf("k%02d", i)] = testhealth.FailureCluster{
			Summary: "f", Last: t0.Add(time.Duration(i-60) * time.Minute),
			ByDay: map[string]int{testhealth.DayKey(t0): 1, testhealth.DayKey(old): 3},
		}
	}
	if err := s.PutTestCase(ctx, tc); err != nil {
		t.Fatal(err)
	}
	stored, err := s.GetTestCase(ctx, "acme", repo, tc.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, pruned := testhealth.Prune(stored, t0)
	if pruned == 0 {
		t.Fatal("nothing to prune")
	}
	if err := s.UpdateHealth(ctx, stored, after, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTestCase(ctx, "acme", repo, tc.ID)
	if err != nil {
		t.Fatal(err)
	}
	after.Rev++
	empty := cmpopts.EquateEmpty()
	if d := cmp.Diff(got, after, empty); d != "" {
		t.Errorf("read back (-got +want):\n%s", d)
	}
}

// TestRunsCountInTheBucketClassificationReads records a failed and a passed
// run at one instant and reads them back through the figures that
// classification uses: the hour written at ingest is the hour read.
func TestRunsCountInTheBucketClassificationReads(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	at := time.Date(2026, 7, 22, 23, 59, 59, 0, time.UTC) // the last second of an hour and of a day
	up := testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: "u1", At: at, SHA: "s1", Branch: "main", Monitored: true}
	runs := []testhealth.Run{
		{Seq: 1, Status: "failed", Message: "boom", Cluster: "c1", Summary: "boom"},
		{Seq: 2, Status: "passed", Attempt: 1},
	}
	id := "06cb6db5-f807-5198-b072-af67a0636f8a"
	if err := s.RecordRuns(ctx, up, []testhealth.TestRuns{{Test: testhealth.TestCase{Org: "acme", Repo: repo, ID: id, Name: "t"}, Runs: runs}}); err != nil {
		t.Fatal(err)
	}
	tc, err := s.GetTestCase(ctx, "acme", repo, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := testhealth.FailureRate(tc, time.Hour, at); got != 0.5 {
		t.Errorf("failure rate over the hour holding the runs = %v, want 0.5 (%v / %v)", got, tc.PassedByHour, tc.FailedByHour)
	}
	if got := testhealth.FailureRate(tc, time.Hour, at.Add(time.Second)); got != 0 {
		t.Errorf("failure rate over the next hour = %v, want 0", got)
	}
	if f := testhealth.MostCommonFailures(tc, 5, at); len(f) != 1 || f[0].Count != 1 {
		t.Errorf("failures of the day holding the run: %+v", f)
	}
	if f := testhealth.MostCommonFailures(tc, 5, at.Add(testhealth.Week)); len(f) != 0 {
		t.Errorf("failures a week on: %+v", f)
	}
	failed, err := s.FailedTestsBetween(ctx, "acme", repo, at, at.Add(time.Second))
	if err != nil || !failed[id].Equal(at) {
		t.Errorf("failed tests of the run's second: %v, %v", failed, err)
	}
}

func TestValidSlug(t *testing.T) {
	t.Parallel()
	for slug, want := range map[string]bool{
		"acme": true, "a": true, "0-team_x": true, strings.Repeat("a", 63): true,
		"": false, strings.Repeat("a", 64): false, "-acme": false, "_acme": false, "Acme": false, "ac me": false, "acmé": false,
	} {
		if got := store.ValidSlug(slug); got != want {
			t.Errorf("ValidSlug(%q) = %v, want %v", slug, got, want)
		}
	}
}

// TestRunBatchIsBounded fills a batch the way an ingest does and checks
// its bounds: at most MaxBatchTests tests (its batch record names them
// all), at most 40 runs a test.
func TestRunBatchIsBounded(t *testing.T) {
	t.Parallel()
	var b store.RunBatch
	test := func(id string) func() testhealth.TestRuns {
		return func() testhealth.TestRuns { return testhealth.TestRuns{Test: testhealth.TestCase{ID: id}} }
	}
	for i := range store.MaxBatchTests {
		if !b.Add(fmt.Sprint(i), test(fmt.Sprint(i)), testhealth.Run{Seq: i}) {
			t.Fatalf("test %d did not fit", i)
		}
	}
	if b.Add("new", test("new"), testhealth.Run{}) {
		t.Errorf("test %d fitted", store.MaxBatchTests+1)
	}
	if !b.Add("0", test("0"), testhealth.Run{Seq: 999}) {
		t.Error("a second run of a held test did not fit")
	}
	tests := b.Take()
	if len(tests) != store.MaxBatchTests || len(tests[0].Runs) != 2 {
		t.Fatalf("took %d tests, the first with %d runs", len(tests), len(tests[0].Runs))
	}
	for i := range 40 {
		if !b.Add("x", test("x"), testhealth.Run{Seq: i}) {
			t.Fatalf("run %d of one test did not fit", i)
		}
	}
	if b.Add("x", test("x"), testhealth.Run{Seq: 40}) {
		t.Error("a 41st run of one test fitted")
	}
	if got := b.Take(); len(got) != 1 || len(got[0].Runs) != 40 || len(b.Take()) != 0 {
		t.Errorf("took %d tests; the batch is not emptied", len(got))
	}
}

// TestIndexEntriesKeepCountersOutOfTheIndexes: a flaky test is listed
// through its index entry, and counting a run into it writes no index copy
// (billed by package billing); an aggregate written before index entries,
// with its keys on it, is listed as it is until its next health write
// moves them to an entry, and is never listed twice.
func TestIndexEntriesKeepCountersOutOfTheIndexes(t *testing.T) {
	t.Parallel()
	db, table := storetest.NewTable(t)
	meter := billing.NewMeter(db, store.TableSpec(table))
	s := store.New(meter, table, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	flaky := func(id string) testhealth.TestCase {
		tc := sampleTest("acme", repo)
		tc.ID, tc.Status = id, testhealth.TestStatus{Value: testhealth.Flaky, Reason: "failure-rate", Timestamp: t0}
		return tc
	}
	listed := func() []string {
		t.Helper()
		page, err := s.ListUnhealthy(ctx, "acme", repo, testhealth.Flaky, store.PageQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tc := range page.Tests {
			ids = append(ids, tc.ID)
		}
		return ids
	}
	const newID, oldID = "00000000-0000-5000-8000-000000000001", "00000000-0000-5000-8000-000000000002"
	if err := s.PutTestCase(ctx, flaky(newID)); err != nil {
		t.Fatal(err)
	}
	// The old layout: the keys on the aggregate itself.
	old, err := attributevalue.MarshalMap(map[string]any{
		"PK": "ORG#acme#REPO#" + repo.Key() + "#TEST#" + oldID, "SK": "TEST", "id": oldID, "org": "acme", "name": "old",
		"repo":   map[string]string{"host": "github.com", "owner": "acme", "name": "web"},
		"status": map[string]string{"value": "flaky", "reason": "failure-rate", "at": t0.Format(time.RFC3339Nano)},
		"GSI1PK": "ORG#acme#REPO#" + repo.Key() + "#STATUS#FLAKY", "GSI1SK": oldID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: old}); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !slices.Equal(got, []string{newID, oldID}) {
		t.Fatalf("listed %v, want both", got)
	}
	meter.Bill = &billing.Bill{}
	up := testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: "u1", At: t0, SHA: "abc", Branch: "main", Monitored: true}
	if err := s.RecordRuns(ctx, up, []testhealth.TestRuns{{Test: flaky(newID), Runs: []testhealth.Run{{Status: "passed"}}}}); err != nil {
		t.Fatal(err)
	}
	if got := meter.Bill.Total().IndexWrite; got != 0 {
		t.Errorf("a passing run of a flaky test wrote %v index units, want 0", got)
	}
	before, err := s.GetTestCase(ctx, "acme", repo, oldID)
	if err != nil {
		t.Fatal(err)
	}
	after := before
	after.Status.Reason = "failure-rate, again"
	if err := s.UpdateHealth(ctx, before, after, nil); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !slices.Equal(got, []string{newID, oldID}) {
		t.Errorf("after moving the old keys: listed %v, want both once", got)
	}
	raw, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		"PK": old["PK"], "SK": &types.AttributeValueMemberS{Value: "TEST"}}})
	if err != nil || raw.Item[store.AttrGSI1PK] != nil {
		t.Errorf("the old aggregate still has its index key: %v", err)
	}
	// Healthy again: no entry, not listed.
	after2 := after
	after2.Rev++
	healthy := after2
	healthy.Status = testhealth.TestStatus{Value: testhealth.Healthy, Timestamp: t0}
	if err := s.UpdateHealth(ctx, after2, healthy, nil); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !slices.Equal(got, []string{newID}) {
		t.Errorf("after the old test recovered: listed %v", got)
	}
}

// TestOutagesAreUnavailableAndBadRequestsAreNot: a store that cannot be
// reached is Unavailable (503, worth a retry); a request DynamoDB refuses
// as invalid (a key over its 2,048 bytes) is not, alone or in a
// transaction, since the same request would fail again.
func TestOutagesAreUnavailableAndBadRequestsAreNot(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	gone := store.New(storetest.NewClient("http://"+addr), "t", fixed)
	if _, err := gone.GetOrg(context.Background(), "acme"); !errs.Is(err, errs.Unavailable) {
		t.Errorf("store gone: %v, want unavailable", err)
	}
	s := storetest.New(t, fixed)
	ctx := context.Background()
	repo := repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}
	long := strings.Repeat("x", 3000)
	if _, err := s.GetTestCase(ctx, "acme", repo, long); err == nil || errs.Is(err, errs.Unavailable) {
		t.Errorf("a key over the limit: %v, want a permanent error", err)
	}
	ev := store.Event{ID: "evt_1", Type: "test_case.ticket_linked", Payload: `{}`, CreatedAt: t0}
	if err := s.LinkTicket(ctx, "acme", repo, long, testhealth.Ticket{ID: "KAN-1"}, ev); err == nil || errs.Is(err, errs.Unavailable) {
		t.Errorf("a transaction with a key over the limit: %v, want a permanent error", err)
	}
}
