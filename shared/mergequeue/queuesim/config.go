package queuesim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
)

// Arrival is how pull requests come to the queue.
type Arrival string

// The arrival processes.
const (
	// Saturated keeps at least max(2·C·B, 8) PRs waiting untested (C the
	// concurrency, B the batching minimum size when batching, else 1), so
	// the queue never starves until every PR is submitted.
	Saturated Arrival = "saturated"
	// Poisson submits PRs at exponentially distributed intervals, Rate per
	// test time on average.
	Poisson Arrival = "poisson"
	// Scheduled submits PRs at exponentially distributed intervals whose
	// rate moves with the PRs (RateSchedule, PRs per hour): bursts.
	Scheduled Arrival = "scheduled"
	// Replayed submits PRs when a recorded history had them arrive
	// (Config.Replay).
	Replayed Arrival = "replayed"
)

// Config is one simulation: the queue's settings and the world's.
type Config struct {
	// Queue holds the queue settings as an updateQueue call carries them;
	// nil fields keep createQueue's defaults. They go through
	// mergequeue.CreateQueue and UpdateQueue, so they are validated exactly
	// as the API validates them. With no RequiredStatuses the queue requires
	// "ci"; the simulated CI reports every status the queue requires.
	Queue mergequeue.QueuePatch

	PRs     int     // how many PRs are submitted, N
	BadRate float64 // p: the probability that a PR breaks the tests
	// BadSchedule, when set, replaces BadRate: p moves with the PRs
	// ("0.02@0,0.12@1000"). Each of its steps is a phase, whose figures
	// Result reports on their own.
	BadSchedule Schedule
	// FlakeRate f is the probability that a good run fails anyway: that
	// one of the flaky tests fails in it. The flaky tests flake in 1 to
	// 10% of runs each; there are as many as make f (see flakyRates).
	FlakeRate float64
	// UnknownFlaky is the share of the flaky tests that test health does
	// not know as flaky: it holds them healthy, so a KNOWN_FLAKY retry
	// policy does not retry their failures. 0: it knows them all.
	UnknownFlaky float64
	// UploadDelay is how long after its checks a run's test results reach
	// test health, whose evidence a failed run may wait for; 0: at once.
	UploadDelay time.Duration
	TestTime    time.Duration // T: how long a CI run takes
	// Spread s makes a run take a time uniform in T·[1−s, 1+s]; 0 is a
	// fixed T.
	Spread float64
	// LogNormal σ, when above 0, makes a run take a time drawn from the
	// log-normal distribution of median T and shape σ (ln of the time is
	// normal with standard deviation σ) instead.
	LogNormal float64
	Arrival   Arrival // Saturated when empty
	Rate      float64 // Poisson arrivals: PRs per test time
	// RateSchedule is the rate of Scheduled arrivals, in PRs per hour,
	// moving with the PRs ("6@0,60@200,6@300": a burst of 100 PRs).
	RateSchedule Schedule
	// Replay, when set, is a recorded history replayed instead of the
	// drawn arrivals, bad PRs and run times (replay.go); PRs must be its
	// number of arrivals.
	Replay *Replay
	// Targets is the number K of independent impacted-target groups a PR
	// is drawn from: PARALLEL mode makes a lane of each. With 0, every PR
	// impacts ALL: one lane.
	Targets int
	Seed    uint64
	// MaxTime bounds the virtual time; reaching it is an error. Zero
	// derives a bound no healthy queue reaches (see limit).
	MaxTime time.Duration

	// everyTick steps on every tick instead of skipping the quiet ones:
	// the reference the tests hold the skipping to.
	everyTick bool
}

func (c Config) validate() error {
	var problems []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	check(c.PRs > 0, "the number of PRs must be at least 1, got %d", c.PRs)
	check(c.BadRate >= 0 && c.BadRate <= 1, "the bad probability must be from 0 to 1, got %v", c.BadRate)
	check(c.FlakeRate >= 0 && c.FlakeRate <= 1, "the flake probability must be from 0 to 1, got %v", c.FlakeRate)
	check(c.UnknownFlaky >= 0 && c.UnknownFlaky <= 1, "the share of unknown flaky tests must be from 0 to 1, got %v", c.UnknownFlaky)
	check(c.UploadDelay >= 0, "the upload delay must not be negative, got %v", c.UploadDelay)
	check(c.TestTime > 0, "the test time must be positive, got %v", c.TestTime)
	check(c.Spread >= 0 && c.Spread < 1, "the spread must be at least 0 and below 1, got %v", c.Spread)
	check(c.LogNormal >= 0 && c.LogNormal <= 2, "the log-normal shape σ must be from 0 to 2, got %v", c.LogNormal)
	check(c.LogNormal == 0 || c.Spread == 0, "a run time is either spread uniformly or log-normal, not both")
	check(c.arrival() == Saturated || c.arrival() == Poisson || c.arrival() == Scheduled || c.arrival() == Replayed,
		"arrivals must be %s, %s or %s, got %q", Saturated, Poisson, Scheduled, c.Arrival)
	if r := c.Replay; r != nil {
		check(len(r.Arrivals) == c.PRs && len(r.Bad) == c.PRs, "a replay of %d arrivals (%d of them known bad or good) replays %d PRs", len(r.Arrivals), len(r.Bad), c.PRs)
		check(slices.IsSorted(r.Arrivals), "a replay's arrivals come in time order")
		check(len(r.Durations) > 0, "a replay needs the durations of its runs")
	}
	check(c.arrival() != Poisson || c.Rate > 0, "Poisson arrivals need a positive rate, got %v", c.Rate)
	check(c.arrival() != Scheduled || len(c.RateSchedule) > 0, "scheduled arrivals need a rate schedule")
	if err := c.RateSchedule.check("the arrival rate", func(v float64) bool { return v > 0 }); err != nil {
		problems = append(problems, fmt.Errorf("arrival rate schedule: %w", err))
	}
	if err := c.BadSchedule.check("the bad probability", func(v float64) bool { return v >= 0 && v <= 1 }); err != nil {
		problems = append(problems, fmt.Errorf("bad probability schedule: %w", err))
	}
	check(c.Targets >= 0, "the number of target groups must be 0 or more, got %d", c.Targets)
	check(c.MaxTime >= 0, "the virtual time bound must not be negative, got %v", c.MaxTime)
	if err := errors.Join(problems...); err != nil {
		return errs.E(errs.Invalid, "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

func (c Config) arrival() Arrival {
	switch {
	case c.Replay != nil:
		return Replayed
	case c.Arrival == "":
		return Saturated
	}
	return c.Arrival
}

// The simulated repository and its target branch.
var repo = repository.Ref{Host: "github.com", Owner: "sim", Name: "app"}

const branch = "main"

// defaultContexts are the required statuses of a Config that names none.
var defaultContexts = []string{"ci"}

// newQueue creates the queue as the createQueue call does (its mode and
// concurrency), then applies every setting as updateQueue does.
func newQueue(p mergequeue.QueuePatch, at time.Time) (mergequeue.Snapshot, error) {
	s, err := mergequeue.CreateQueue(repo, branch, p, at)
	if err != nil {
		return s, settingsError(err)
	}
	if len(p.RequiredStatuses) == 0 && !p.DeleteRequiredStatuses {
		p.RequiredStatuses = defaultContexts
	}
	// The simulated GitHub shows no comments or labels, which change
	// nothing the simulation measures; their effects would only cost steps.
	off := false
	p.CommentsEnabled, p.StateLabelsEnabled = &off, &off
	s, _, err = mergequeue.UpdateQueue(s, p, at)
	if err != nil {
		return s, settingsError(err)
	}
	return s, nil
}

// settingsError is the engine's refusal of a setting, as the API would
// show it.
func settingsError(err error) error {
	return errs.E(errs.Invalid, "queue settings: %s", cmp.Or(errs.MessageOf(err), err.Error()))
}

// contexts are the statuses the simulated CI reports on each run: those
// queue q requires, or, when it defers to branch protection, the ones the
// world's protection requires.
func contexts(q mergequeue.Queue) []string {
	if len(q.RequiredStatuses) > 0 {
		return q.RequiredStatuses
	}
	return defaultContexts
}

// limit is the virtual-time bound. A healthy queue concludes the first PR
// of its line within 1 + depth runs (it merges, or fails once the
// pending-failure depth's PRs behind it have finished), each run lasting
// at most the longest test time or the timeout, and each flaky retry
// adding a wait for test results and a run; so every PR is done after
// N·(1 + depth + retries) runs once it has arrived. One run more per PR,
// plus a day, is never reached unless the queue is stuck. It is capped at
// a century, which time.Duration holds.
func (c Config) limit(q mergequeue.Queue) time.Duration {
	if c.MaxTime > 0 {
		return c.MaxTime
	}
	run := max(float64(c.TestTime)*(1+c.Spread), float64(q.TestingTimeoutMinutes)*float64(time.Minute))
	wait := float64(min(c.UploadDelay, time.Duration(q.FlakyEvidenceWaitSeconds)*time.Second))
	perPR := float64(2+max(q.PendingFailureDepth, 0))*run + float64(q.FlakyRetries)*(wait+run)
	bound := float64(c.PRs)*perPR + float64(24*time.Hour)
	switch c.arrival() {
	case Poisson:
		bound += 2 * float64(c.PRs) / c.Rate * float64(c.TestTime)
	case Scheduled:
		for i := range c.PRs {
			bound += 2 * float64(time.Hour) / c.RateSchedule.at(i)
		}
	case Replayed:
		bound += float64(c.Replay.Arrivals[len(c.Replay.Arrivals)-1])
		run = max(run, float64(slices.Max(c.Replay.Durations)))
		bound += float64(c.PRs) * float64(2+max(q.PendingFailureDepth, 0)) * run
	}
	return time.Duration(min(bound, float64(100*365*24*time.Hour)))
}

// phases are the steps of the bad probability: the PRs from From to To
// (exclusive) have probability P. One phase without a schedule.
func (c Config) phases() []phase {
	if len(c.BadSchedule) == 0 {
		return []phase{{From: 0, To: c.PRs, P: c.BadRate}}
	}
	var out []phase
	for i, pt := range c.BadSchedule {
		if pt.From >= c.PRs {
			break
		}
		to := c.PRs
		if i+1 < len(c.BadSchedule) {
			to = min(c.BadSchedule[i+1].From, c.PRs)
		}
		out = append(out, phase{From: pt.From, To: to, P: pt.Value})
	}
	return out
}

// phase is a run of PRs with one bad probability.
type phase struct {
	From, To int
	P        float64
}
