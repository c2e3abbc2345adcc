package queueapi_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/github/githubsim"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// flakyDB fails some DynamoDB calls: before sending them (nothing
// happened) or, for writes, after (it happened, the answer was lost).
type flakyDB struct {
	store.DB
	mu           sync.Mutex
	rnd          *rand.Rand
	before, lost float64
	failed       int
}

var errInjected = errors.New("injected DynamoDB fault")

// calm stops the faults.
func (f *flakyDB) calm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before, f.lost = 0, 0
}

func (f *flakyDB) roll() (before, lost bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x := f.rnd.Float64()
	before, lost = x < f.before, x >= f.before && x < f.before+f.lost
	if before || lost {
		f.failed++
	}
	return before, lost
}

func (f *flakyDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if b, _ := f.roll(); b {
		return nil, errInjected
	}
	return f.DB.GetItem(ctx, in, o...)
}

func (f *flakyDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	b, l := f.roll()
	if b {
		return nil, errInjected
	}
	out, err := f.DB.UpdateItem(ctx, in, o...)
	if l {
		return nil, errInjected
	}
	return out, err
}

func (f *flakyDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	b, l := f.roll()
	if b {
		return nil, errInjected
	}
	out, err := f.DB.TransactWriteItems(ctx, in, o...)
	if l {
		return nil, errInjected
	}
	return out, err
}

// Two drivers step the same queue at once, round after round, while
// GitHub answers 500, 502, rate limits, hangs and loses answers after
// acting, and DynamoDB fails calls before and after doing them. No PR is
// merged twice or without a passing run that contained it, none is lost,
// and the order holds.
//
// The test runs in two phases so that it does not depend on the machine's
// speed: chaosRounds rounds of faults (which requests a fault hits depends
// on how the two drivers interleave, and a slow machine makes more calls
// time out; neither may break an invariant), then calm rounds with no new
// fault and generous timeouts, in which the queue must finish within a
// bound set by the work left, not by the clock.
func TestConcurrentDriversWithFaults(t *testing.T) {
	t.Parallel()
	const (
		chaosRounds = 25
		// calmRounds bounds the rounds a fault-free queue of six PRs needs
		// (each round steps both drivers and lets CI answer): far more than
		// it takes, so only a queue that stopped making progress hits it.
		calmRounds = 60
	)
	e := newEnv(t, nil)
	e.ok("createQueue", q(map[string]any{"concurrency": 3}), nil)
	names := []string{"c1", "c2", "c3", "c4", "c5", "c6"}
	var prs []int
	for _, name := range names {
		n := e.openPR(name)
		prs = append(prs, n)
		e.ok("submitPullRequest", prq(n, nil), nil)
	}
	key := store.QueueKey{Org: "acme", Repo: repository.Ref{Host: "github.com", Owner: "acme", Name: "web"}, Branch: "main"}
	var dbs []*flakyDB
	for i := range 2 {
		dbs = append(dbs, &flakyDB{DB: e.DB, rnd: rand.New(rand.NewPCG(uint64(i), 7)), before: 0.15, lost: 0.1})
	}
	// drivers builds the two drivers; timeout bounds each GitHub call,
	// which is how a hanging GitHub is cut off.
	drivers := func(timeout time.Duration) []*queuesvc.Service {
		var ds []*queuesvc.Service
		for _, db := range dbs {
			gh, err := github.New(github.Config{BaseURL: e.Sim.URL(), Token: "x", Timeout: timeout, Now: e.Clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			ds = append(ds, &queuesvc.Service{Store: store.New(db, e.Table, e.Clock.Now), GitHub: gh, Now: e.Clock.Now, NewID: uuid.NewString})
		}
		return ds
	}
	round := func(ds []*queuesvc.Service) {
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Go(func() { _ = d.Advance(context.Background(), key) })
		}
		wg.Wait()
		e.ci("c3.txt")
		e.Clock.Advance(time.Minute)
	}
	rnd := rand.New(rand.NewPCG(42, 1))
	kinds := []githubsim.FaultKind{
		githubsim.FaultServerError, githubsim.FaultBadGateway, githubsim.FaultRateLimit,
		githubsim.FaultSecondaryRateLimit, githubsim.FaultLoseResponse, githubsim.FaultHang,
	}
	prefixes := []string{"/repos/acme/web/pulls", "/repos/acme/web/git/", "/repos/acme/web/merges", "/repos/acme/web/commits", "/repos/acme/web/branches", "/repos/acme/web/statuses"}
	done := allDone(e, prs...)
	chaos := drivers(time.Second)
	chaosRan, calmRan := 0, 0
	for ; chaosRan < chaosRounds && !done(); chaosRan++ {
		for range 3 {
			kind := kinds[rnd.IntN(len(kinds))]
			if kind == githubsim.FaultHang && rnd.IntN(4) != 0 {
				kind = githubsim.FaultLoseResponse
			}
			e.Sim.InjectFault(githubsim.Fault{PathPrefix: prefixes[rnd.IntN(len(prefixes))], Kind: kind, Skip: rnd.IntN(6)})
		}
		// Merges lose their answer often: the case that could merge twice.
		e.Sim.InjectFault(githubsim.Fault{Method: "PUT", PathPrefix: "/repos/acme/web/pulls/", Kind: githubsim.FaultLoseResponse, Skip: rnd.IntN(2)})
		round(chaos)
	}
	faults := dbs[0].failed + dbs[1].failed
	e.Sim.ClearFaults()
	for _, db := range dbs {
		db.calm()
	}
	calm := drivers(time.Minute)
	for ; !done(); calmRan++ {
		if calmRan == calmRounds {
			t.Fatalf("not done %d fault-free rounds after the faults stopped: %v", calmRounds, e.states(prs...))
		}
		round(calm)
	}

	if diff := cmp.Diff(e.states(prs...), []string{"MERGED", "MERGED", "FAILED", "MERGED", "MERGED", "MERGED"}); diff != "" {
		t.Errorf("states (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(e.mergedOrder(), []int{1, 2, 4, 5, 6}); diff != "" {
		t.Errorf("merges on main, oldest first, each once (-got +want):\n%s", diff)
	}
	for _, n := range []int{1, 2, 4, 5, 6} {
		got := e.pr(n)
		var d struct {
			Status             string `json:"status"`
			TestedPullRequests []struct {
				PRNumber int `json:"prNumber"`
			} `json:"testedPullRequests"`
			DependentPrs []struct {
				PRNumber int `json:"prNumber"`
			} `json:"dependentPrs"`
		}
		e.ok("getMergeQueueTestingDetails", map[string]any{"testRunId": got.VerifiedByTestRun}, &d)
		if d.Status != "SUCCEEDED" || len(d.TestedPullRequests) == 0 || d.TestedPullRequests[len(d.TestedPullRequests)-1].PRNumber != n {
			t.Errorf("PR %d merged without a passing run of its own: %+v", n, d)
		}
		for _, dp := range d.DependentPrs {
			if dp.PRNumber == 3 {
				t.Errorf("PR %d merged on a run containing the failing PR 3", n)
			}
		}
	}
	hist, _ := e.Sim.History(repoFull, "main")
	for _, c := range hist {
		if strings.Contains(c.Subject, "(#3)") {
			t.Errorf("PR 3 is on main: %s", c.Subject)
		}
	}
	if faults == 0 {
		t.Error("no DynamoDB fault was injected")
	}
	t.Logf("%d rounds with faults, %d without; DynamoDB faults injected: %d; GitHub requests: %d",
		chaosRan, calmRan, faults, e.Sim.RequestCount("", "/"))
}
