package healthsvc_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/internal/testkit"
	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/healthsvc"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
	"github.com/mainguard/mainguard/shared/store/storetest"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// costTests is how many tests of a profile one measured upload carries:
// the upload's own writes are shared among them, as in a real upload.
const costTests = 10

// costProfiles are the tests whose storage cost BenchmarkCost measures:
// fresh (first seen in the upload), and mature ones with 20 runs an hour
// on main for 7 or 30 days, healthy or failing one run in eight (flaky:
// one in ten sits on the default flaky threshold, where a single pass
// makes the test healthy again, and its index entries go).
var costProfiles = []struct {
	name      string
	days      int
	failEvery int // one run in failEvery fails; 0: none
}{
	{"fresh", 0, 0},
	{"healthy-7d", 7, 0},
	{"flaky-7d", 7, 8},
	{"healthy-30d", 30, 0},
	{"flaky-30d", 30, 8},
}

// meteredEnv is env whose store bills every call (billing.Meter), with
// the unmetered client beside it for seeding and bare reads.
type meteredEnv struct {
	*env
	meter *billing.Meter
	raw   *dynamodb.Client
	plain *store.Store // the same table, unmetered: seeding
}

func newMeteredEnv(tb testing.TB) *meteredEnv {
	tb.Helper()
	c := testkit.NewClock(time.Date(2026, 7, 23, 12, 0, 0, 0, time.UTC))
	raw, table := storetest.NewTable(tb)
	meter := billing.NewMeter(raw, store.TableSpec(table))
	s := store.New(meter, table, c.Now)
	ctx := context.Background()
	if _, err := s.CreateOrg(ctx, "acme", ""); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.UpdateRepo(ctx, "acme", repo, store.RepoSettings{}); err != nil {
		tb.Fatal(err)
	}
	e := &env{t: &testing.T{}, s: s, dir: blobs.Dir{Root: tb.TempDir()}, clock: c}
	e.svc = &healthsvc.Service{
		Store: s, Blobs: e.dir, Now: c.Now, Log: slog.New(slog.DiscardHandler),
		Viewer: healthview.Viewer{PublicAppURL: "https://app.example"},
		NewID:  func() string { return fmt.Sprintf("msg_%06d", e.next()) },
	}
	return &meteredEnv{env: e, meter: meter, raw: raw, plain: store.New(raw, table, c.Now)}
}

func costTestName(profile string, i int) string { return fmt.Sprintf("%s_%02d", profile, i) }

func costTestID(name string) string {
	return testhealth.TestID(testhealth.Identity{Org: "acme", Repo: "github.com/acme/web", File: "src/app_test.go", Classname: "pkg", Parent: "suite", Name: name})
}

// seed records days of history for the profile's tests through the store,
// as ingests would have: one upload an hour on main (from pull request
// 1000+hour, so failures name pull requests), 20 runs of each test; then
// classifies them.
func (e *meteredEnv) seed(tb testing.TB, profile string, days, failEvery int) {
	tb.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	var ids []string
	tests := make([]testhealth.TestRuns, costTests)
	for i := range tests {
		name := costTestName(profile, i)
		id := costTestID(name)
		tests[i].Test = testhealth.TestCase{ID: id, Name: name, FilePath: "src/app_test.go", Parent: "suite", Classname: "pkg"}
		ids = append(ids, id)
	}
	r, err := e.plain.GetRepo(ctx, "acme", repo)
	if err != nil {
		tb.Fatal(err)
	}
	svc := *e.svc
	svc.Store = e.plain
	// Classify as ingests do after each batch; daily suffices for the
	// items' shape (pruning included) and keeps seeding fast.
	classify := func(at time.Time) {
		svc.Now = func() time.Time { return at }
		if err := svc.Reclassify(ctx, "acme", repo, r.Settings(), nil, ids); err != nil {
			tb.Fatal(err)
		}
	}
	sem := make(chan struct{}, 8)
	errc := make(chan error, days*24*costTests)
	for h := days * 24; h > 0; h-- {
		if h%24 == 0 {
			for range cap(sem) {
				sem <- struct{}{}
			}
			classify(now.Add(-time.Duration(h) * time.Hour))
			for range cap(sem) {
				<-sem
			}
		}
		up := testhealth.UploadRuns{Org: "acme", Repo: repo, Upload: fmt.Sprintf("seed-%s-%05d", profile, h),
			At: now.Add(-time.Duration(h) * time.Hour), SHA: fmt.Sprintf("%040d", h), Branch: "main", PR: 1000 + h,
			Monitored: true}
		for _, tr := range tests {
			var runs []testhealth.Run
			for r := range 20 {
				st, cluster := "passed", ""
				if failEvery > 0 && (h*20+r)%failEvery == 0 {
					st, cluster = "failed", fmt.Sprintf("cluster-%d", h%3)
				}
				runs = append(runs, testhealth.Run{Seq: r, Status: st, Cluster: cluster, Summary: "expected 200, got 500", Message: "expected 200, got 500"})
			}
			tr.Runs = runs
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				errc <- e.plain.RecordRuns(ctx, up, []testhealth.TestRuns{tr})
			}()
		}
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errc)
	for err := range errc {
		if err != nil {
			tb.Fatal(err)
		}
	}
	classify(now)
	if failEvery > 0 {
		if tc, err := e.plain.GetTestCase(ctx, "acme", repo, ids[0]); err != nil || tc.Status.Value != testhealth.Flaky {
			tb.Fatalf("seeded %s: %v (%v), want flaky", profile, tc.Status, err)
		}
	}
}

// testItemKey is the key of a test's item: its counter item (SK=TEST),
// failure item (TEST#FAIL) or meta item (TEST#META).
func testItemKey(id, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		store.AttrPK: &types.AttributeValueMemberS{Value: "ORG#acme#REPO#" + repo.Key() + "#TEST#" + id},
		store.AttrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// itemSize is the stored size of a test's item by the billing rules, 0
// when there is none.
func (e *meteredEnv) itemSize(tb testing.TB, id, sk string) int {
	tb.Helper()
	out, err := e.raw.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.s.Table()), ConsistentRead: aws.Bool(true), Key: testItemKey(id, sk)})
	if err != nil {
		tb.Fatalf("test item %s: %v", id, err)
	}
	return billing.ItemSize(out.Item)
}

// BenchmarkCost measures, by DynamoDB's billing rules (package billing),
// what test health's storage costs per test: the request units of an
// upload carrying costTests tests of a profile (the upload's own items
// shared among them), with a passing and with a failing run each; the size
// of a test's item; and get-test-details' reads (the repository and the
// test, as its handler reads them, with the view built) beside a bare
// GetItem of the test's item, in the same run. Seeding 30 days takes a few
// minutes on DynamoDB Local.
//
//	go test -run '^$' -bench Cost -benchtime 3x ./shared/healthsvc/
func BenchmarkCost(b *testing.B) {
	for _, p := range costProfiles {
		b.Run(p.name, func(b *testing.B) { benchCost(b, p.name, p.days, p.failEvery) })
	}
}

func benchCost(b *testing.B, profile string, days, failEvery int) {
	ctx := context.Background()
	e := newMeteredEnv(b)
	e.seed(b, profile, days, failEvery)
	uploads := 0
	// name is test i of the profile in the latest upload: a fresh test is
	// new in every upload.
	name := func(i int) string {
		if days == 0 {
			return fmt.Sprintf("%s_u%d", costTestName(profile, i), uploads)
		}
		return costTestName(profile, i)
	}
	// What an upload costs whatever it holds (its upload item, created and
	// finished, and its batch record): an upload of no test, billed once.
	empty, _ := e.stageSized(b, report("src/app_test.go"))
	e.meter.Bill = &billing.Bill{}
	if err := e.svc.Ingest(ctx, "acme", empty); err != nil {
		b.Fatal(err)
	}
	own := e.meter.Bill.Total()
	for _, outcome := range []string{"fail", "pass"} {
		b.Run("upload-"+outcome, func(b *testing.B) {
			// Passing uploads come one an hour for a day per op, so that the
			// folds of a counter item's old hours are in the figure, as they
			// are in a month's bill; failing ones come in the same hour
			// (a day of them would make the test broken), each from a new
			// pull request, so that packing pull-request times
			// (store/failedprs.go, one in 16 failing uploads) is in the
			// figure at -benchtime 16x and more.
			perOp := 1
			if outcome == "pass" {
				perOp = 24
			}
			var read, write, index float64
			for range b.N * perOp {
				if perOp > 1 {
					e.clock.Advance(time.Hour)
				}
				uploads++
				var cases []string
				pr := 0
				for i := range costTests {
					c := name(i)
					if outcome == "fail" {
						c += "!"
						pr = 5000 + uploads // a new pull request each, as the flaky profiles fail
					}
					cases = append(cases, c)
				}
				id, _ := e.stageOnPR(b, report("src/app_test.go", cases...), pr)
				e.meter.Bill = &billing.Bill{}
				if err := e.svc.Ingest(ctx, "acme", id); err != nil {
					b.Fatal(err)
				}
				t := e.meter.Bill.Total()
				if testing.Verbose() {
					b.Logf("%s", e.meter.Bill)
				}
				read, write, index = read+t.Read, write+t.Write, index+t.IndexWrite
			}
			n := float64(b.N * perOp * costTests)
			b.ReportMetric(write/n+index/n, "wru/test")
			// The test's own share: without what the upload costs anyway.
			b.ReportMetric((write+index-float64(b.N*perOp)*(own.Write+own.IndexWrite))/n, "own-wru/test")
			b.ReportMetric(index/n, "index-wru/test")
			b.ReportMetric(read/n, "rru/test")
			id := costTestID(name(0))
			b.ReportMetric(float64(e.itemSize(b, id, "TEST")), "item-bytes")
			b.ReportMetric(float64(e.itemSize(b, id, "TEST#FAIL")), "fail-item-bytes")
			b.ReportMetric(float64(e.itemSize(b, id, "TEST#META")), "meta-item-bytes")
		})
	}
	if uploads == 0 { // the upload runs were not selected: a fresh test must exist to be read
		uploads++
		id, _ := e.stageSized(b, report("src/app_test.go", name(0)))
		if err := e.svc.Ingest(ctx, "acme", id); err != nil {
			b.Fatal(err)
		}
	}
	id := costTestID(name(0))
	b.Run("get-test-details", func(b *testing.B) {
		e.meter.Bill = &billing.Bill{}
		for range b.N {
			r, tc, err := e.s.ShowTest(ctx, "acme", repo, id)
			if err != nil {
				b.Fatal(err)
			}
			s := r.Settings()
			tc.Quarantined = testhealth.Quarantined(tc, s)
			_ = e.svc.Viewer.Full(tc, s, e.clock.Now())
		}
		b.ReportMetric(e.meter.Bill.Total().Read/float64(b.N), "rru/op")
	})
	b.Run("bare-getitem", func(b *testing.B) {
		in := &dynamodb.GetItemInput{TableName: aws.String(e.s.Table()), ConsistentRead: aws.Bool(true), Key: testItemKey(id, "TEST")}
		for range b.N {
			if out, err := e.raw.GetItem(ctx, in); err != nil || out.Item == nil {
				b.Fatal(err)
			}
		}
	})
}
