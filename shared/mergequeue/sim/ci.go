package sim

import (
	"container/heap"
	"math/rand/v2"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// ci runs the tests of test branches: each run takes the test time (with
// its spread) and then reports its statuses.
type ci struct {
	testTime  time.Duration
	spread    float64
	flakeRate float64
	rng       *rand.Rand // CI's own stream: durations and flakes

	runs    map[string]*ciRun // every run ever started, by run id
	running runQueue          // runs whose checks are still to come, soonest first
}

// ciRun is one CI run of a test branch.
type ciRun struct {
	id    string
	sha   string // the test branch head
	end   time.Time
	fails bool
	gone  bool // its branch was deleted: no checks will come
	seq   int  // start order, to break ties in end time deterministically
}

// build builds a StartRun's test branch and starts its CI run. A run id
// seen before is the engine asking again for a build it heard nothing of:
// the same branch, the same run.
func (c *ci) build(s *mergequeue.StartRun, now time.Time, failing bool, commit func() string) mergequeue.BuildResult {
	r, ok := c.runs[s.RunID]
	if !ok {
		// Both draws are made for every run, so one run's outcome never
		// shifts the random numbers of the runs after it.
		d := time.Duration(float64(c.testTime) * (1 - c.spread + 2*c.spread*c.rng.Float64()))
		flaky := c.rng.Float64() < c.flakeRate
		r = &ciRun{id: s.RunID, sha: commit(), end: now.Add(d), fails: failing || flaky, seq: len(c.runs)}
		c.runs[s.RunID] = r
		heap.Push(&c.running, r)
	}
	return mergequeue.BuildResult{RunID: s.RunID, HeadSHA: r.sha}
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
// reporting every required status.
func (c *ci) finished(now time.Time, contexts []string) []mergequeue.RunChecks {
	var out []mergequeue.RunChecks
	for len(c.running) > 0 && !c.running[0].end.After(now) {
		r := heap.Pop(&c.running).(*ciRun)
		if r.gone {
			continue
		}
		state := "success"
		if r.fails {
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
