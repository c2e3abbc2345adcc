package queuesim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// ci runs the tests of test branches: each run takes the test time (with
// its spread), then reports its statuses and, UploadDelay later, uploads
// its test results to test health.
type ci struct {
	testTime    time.Duration
	spread      float64
	logNormal   float64         // σ, when above 0: log-normal durations of median testTime
	durations   []time.Duration // when set, a run takes one of these at random (a replay)
	uploadDelay time.Duration
	suite       suite
	rng         *rand.Rand // CI's own stream: durations

	runs    map[string]*ciRun // every run ever started, by run id
	running runQueue          // runs whose checks are still to come, soonest first
}

// ciRun is one CI run of a test branch.
type ciRun struct {
	id     string
	sha    string // the test branch head
	end    time.Time
	broken []mergequeue.FailedTest // the tests its bad PRs break
	failed []mergequeue.FailedTest // the tests that failed, once it ended: it fails when one did
	upload time.Time               // when test health holds its results
	told   bool                    // its evidence went to a step
	gone   bool                    // its branch was deleted: no checks will come
	seq    int                     // start order, to break ties in end time deterministically
	pr     int                     // its last PR under test, whose phase it counts in
}

// lastUnderTest is the number of the last PR under test among heads.
func lastUnderTest(heads []mergequeue.RunPR) int {
	n := 0
	for _, h := range heads {
		if h.UnderTest {
			n = h.PRNumber
		}
	}
	return n
}

// build builds a StartRun's test branch and starts its CI run, in which
// the tests broken fail. A run id seen before is the engine asking again
// for a build it heard nothing of: the same branch, the same run. A
// retry's StartRun may name the failed run's head to reuse (ReuseSHA);
// the world builds afresh all the same: the retry is a new CI run either
// way, which draws its own flakes.
func (c *ci) build(s *mergequeue.StartRun, now time.Time, broken []mergequeue.FailedTest, commit func() string) mergequeue.BuildResult {
	r, ok := c.runs[s.RunID]
	if !ok {
		// One draw for every run, so one run's outcome never shifts the
		// random numbers of the runs after it.
		var d time.Duration
		if len(c.durations) > 0 {
			d = c.durations[c.rng.IntN(len(c.durations))]
		} else if c.logNormal > 0 {
			d = time.Duration(float64(c.testTime) * math.Exp(c.logNormal*c.rng.NormFloat64()))
		} else {
			d = time.Duration(float64(c.testTime) * (1 - c.spread + 2*c.spread*c.rng.Float64()))
		}
		end := now.Add(d)
		r = &ciRun{id: s.RunID, sha: commit(), end: end, broken: broken, upload: end.Add(c.uploadDelay), seq: len(c.runs), pr: lastUnderTest(s.Heads)}
		c.runs[s.RunID] = r
		heap.Push(&c.running, r)
	}
	return mergequeue.BuildResult{RunID: s.RunID, HeadSHA: r.sha}
}

// evidence is what test health holds by now for the runs a step wants
// evidence of: the failed tests each uploaded. The world builds every run
// afresh, so a head sha is one run's, and the run id finds its upload.
func (c *ci) evidence(wanted []mergequeue.Run, now time.Time) []mergequeue.RunEvidence {
	var out []mergequeue.RunEvidence
	for _, w := range wanted {
		if r := c.runs[w.ID]; r != nil && !r.upload.After(now) {
			r.told = true
			out = append(out, mergequeue.RunEvidence{RunID: r.id, Failed: r.failed})
		}
	}
	return out
}

// nextUpload is when the first upload of the wanted runs that no step has
// been told of comes, if one will: an event, as the upload's webhook would
// be. A step has been told of the others: the engine decided on them, or
// no longer needs them.
func (c *ci) nextUpload(wanted []mergequeue.Run) (time.Time, bool) {
	var next time.Time
	for _, w := range wanted {
		if r := c.runs[w.ID]; r != nil && !r.told && (next.IsZero() || r.upload.Before(next)) {
			next = r.upload
		}
	}
	return next, !next.IsZero()
}

func (c *ci) deleteBranches(runID string) {
	if r, ok := c.runs[runID]; ok {
		r.gone = true
	}
}

// next is when the next run ends, if one is running.
func (c *ci) next() (time.Time, bool) {
	for len(c.running) > 0 && c.running[0].gone {
		heap.Pop(&c.running)
	}
	if len(c.running) == 0 {
		return time.Time{}, false
	}
	return c.running[0].end, true
}

// finished hands over the checks of the runs that ended by now, each
// reporting every required status. A run's flakes are drawn as it ends: a
// run cancelled before then draws none, so the flakes of the runs that
// end do not depend on how many others the engine started and cancelled.
func (c *ci) finished(now time.Time, contexts []string) []mergequeue.RunChecks {
	var out []mergequeue.RunChecks
	for len(c.running) > 0 && !c.running[0].end.After(now) {
		r := heap.Pop(&c.running).(*ciRun)
		if r.gone {
			continue
		}
		r.failed = append(r.broken, c.suite.flakes()...)
		state := "success"
		if len(r.failed) > 0 {
			state = "failure"
		}
		checks := make(map[string]string, len(contexts))
		for _, ctx := range contexts {
			checks[ctx] = state
		}
		out = append(out, mergequeue.RunChecks{RunID: r.id, SHA: r.sha, Checks: checks})
	}
	return out
}

// runQueue is a heap of runs by end time.
type runQueue []*ciRun

func (q runQueue) Len() int { return len(q) }
func (q runQueue) Less(i, j int) bool {
	if !q[i].end.Equal(q[j].end) {
		return q[i].end.Before(q[j].end)
	}
	return q[i].seq < q[j].seq
}
func (q runQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *runQueue) Push(x any)   { *q = append(*q, x.(*ciRun)) }
func (q *runQueue) Pop() any {
	old := *q
	r := old[len(old)-1]
	*q = old[:len(old)-1]
	return r
}
