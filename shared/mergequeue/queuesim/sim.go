package queuesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// start is when every simulation begins: on a minute, like the scheduler's
// ticks.
var start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// maxSettling bounds the steps at one instant: each answers the effects of
// the one before (a build, the next merge of a cascade), so a few per PR
// in the line suffice; more means the engine and the world feed each other
// without end.
const maxSettling = 10_000

// simulation is one run of the loop.
type simulation struct {
	cfg   Config
	snap  mergequeue.Snapshot
	world *world
	prRNG *rand.Rand // the PRs' own stream: badness, targets, arrivals
	bad   []bool     // by PR number − 1
	// groups are the impacted targets of each target group: one target
	// each, so PRs of different groups are independent.
	groups []*mergequeue.Targets

	now   time.Time
	limit time.Time
	ids   int

	// active are the submitted PRs that have not concluded, ascending:
	// the PRs each step observes.
	active      []int
	concluded   int
	nextArrival time.Time // Poisson: when the next PR arrives
	lastSubmit  time.Time

	steps, probes int
	probeEntries  []mergequeue.Entry           // the probes' copy of the entries (quietAt)
	retries       int                          // flaky retries taken
	autopilot     []mergequeue.AutopilotChange // the autopilot's changes, from its events
}

// Run simulates cfg to the end: until every PR has concluded (merged,
// failed or cancelled). An invalid Config or queue setting is an errs.Invalid
// error; reaching the virtual-time bound with PRs still in the queue is an
// error too.
func Run(cfg Config) (Result, error) {
	s, err := newSimulation(cfg)
	if err != nil {
		return Result{}, err
	}
	if err := s.loop(); err != nil {
		return Result{}, err
	}
	return s.result(), nil
}

func newSimulation(cfg Config) (*simulation, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	snap, err := newQueue(cfg.Queue, start)
	if err != nil {
		return nil, err
	}
	// Streams of their own, so that which PRs are bad does not depend on
	// how many runs the engine asked for before they arrived, nor do the
	// flakes on the runs' durations.
	prRNG := rand.New(rand.NewPCG(cfg.Seed, 1))
	ci := ci{
		testTime: cfg.TestTime, spread: cfg.Spread, logNormal: cfg.LogNormal, uploadDelay: cfg.UploadDelay, durations: replayed(cfg),
		suite: newSuite(rand.New(rand.NewPCG(cfg.Seed, 3)), cfg.FlakeRate, cfg.UnknownFlaky),
		rng:   rand.New(rand.NewPCG(cfg.Seed, 2)),
	}
	return &simulation{
		cfg:         cfg,
		snap:        snap,
		world:       newWorld(contexts(snap.Queue), ci),
		prRNG:       prRNG,
		bad:         badPRs(prRNG, cfg),
		groups:      targetGroups(cfg.Targets),
		now:         start,
		limit:       start.Add(cfg.limit(snap.Queue)),
		nextArrival: start,
	}, nil
}

// loop steps the engine at every event and again at the same instant while
// the world holds answers for it, then moves the clock to the next event or
// the next tick that matters.
func (s *simulation) loop() error {
	settling := 0
	for s.concluded < s.cfg.PRs {
		if !s.now.Before(s.limit) {
			return fmt.Errorf("sim: %d of %d PRs still in the queue after %v of virtual time, the bound",
				s.cfg.PRs-s.concluded, s.cfg.PRs, s.limit.Sub(start))
		}
		if err := s.arrive(); err != nil {
			return err
		}
		// The loop keeps only the new snapshot: the engine may write the
		// old one's entries in place rather than copy them (probes, which
		// keep it, use Step).
		s.take(mergequeue.StepConsuming(s.snap, s.world.observe(s.now, s.snap, s.active), s.now, s.newID))
		s.steps++
		if s.world.awaited(s.snap, s.now) {
			if settling++; settling > maxSettling {
				return fmt.Errorf("sim: the queue did not settle at %v after %d steps", s.now.Sub(start), settling)
			}
			continue
		}
		settling = 0
		s.now = s.next()
	}
	return nil
}

// submit opens the next PR and submits it.
func (s *simulation) submit() error {
	targets := allTargets
	if s.cfg.Targets > 0 {
		targets = s.groups[s.prRNG.IntN(s.cfg.Targets)]
	}
	p := s.world.openPR(s.bad[len(s.world.prs)], targets)
	p.submitted, s.lastSubmit = s.now, s.now
	snap, out, err := mergequeue.SubmitConsuming(s.snap, mergequeue.SubmitRequest{PRNumber: p.number}, s.now, s.newID)
	if err != nil {
		return fmt.Errorf("sim: submitting PR %d at %v: %w", p.number, s.now.Sub(start), err)
	}
	s.active = append(s.active, p.number)
	s.take(snap, out)
	return nil
}

// take adopts a new snapshot and performs its output, as the driver saves
// and then performs; it notes the PRs that concluded, and the retries.
func (s *simulation) take(snap mergequeue.Snapshot, out mergequeue.Output) {
	s.snap = snap
	for _, t := range out.Transitions {
		if t.Reason == mergequeue.ReasonRetryKnownFlaky || t.Reason == mergequeue.ReasonRetryFailure {
			s.retries++
		}
		if !t.To.Terminal() {
			continue
		}
		p := s.world.pr(t.PRNumber)
		p.outcome, p.concluded = t.To, t.At
		if i, ok := slices.BinarySearch(s.active, t.PRNumber); ok {
			s.active = slices.Delete(s.active, i, i+1)
			s.concluded++
		}
	}
	for _, e := range out.Effects {
		if e.Kind == mergequeue.EffectEvent && e.Event.Autopilot != nil {
			s.autopilot = append(s.autopilot, *e.Event.Autopilot)
		}
	}
	s.world.apply(out.Effects, s.now)
}

// newID makes the engine's ids: numbered UUIDs, so a run is repeatable.
// The number leads, as random UUIDs differ at once: the engine compares
// ids in its inner loops, and a long shared prefix would make each
// comparison slower than production's.
func (s *simulation) newID() string {
	s.ids++
	return fmt.Sprintf("%08x-0000-4000-8000-000000000000", s.ids)
}

// badPRs draws which PRs are bad: in each phase of n PRs, exactly
// round(p·n) of them, at random places. Each PR is bad with probability
// p, as with a draw per PR, but the share of bad PRs is p in every run:
// independent draws would add the noise of a binomial count, which
// dominates the throughput's spread (2,000 PRs at p = 20% hold 400 ± 18
// bad ones, and the throughput moves almost one for one with them).
func badPRs(rng *rand.Rand, cfg Config) []bool {
	if cfg.Replay != nil {
		return slices.Clone(cfg.Replay.Bad)
	}
	var bad []bool
	for _, ph := range cfg.phases() {
		n := ph.To - ph.From
		part := make([]bool, n)
		for _, i := range rng.Perm(n)[:int(math.Round(ph.P*float64(n)))] {
			part[i] = true
		}
		bad = append(bad, part...)
	}
	return bad
}

// allTargets are the impacted targets of a PR when there are no groups:
// it impacts everything, so PARALLEL mode makes one lane.
var allTargets = mergequeue.NewTargets(true, nil)

// targetGroups are k groups' impacted targets, one target each, named so
// that no two share a bit of the engine's fingerprint: the groups are
// truly independent lanes.
func targetGroups(k int) []*mergequeue.Targets {
	groups := make([]*mergequeue.Targets, 0, k)
	for i, try := 0, 0; len(groups) < k; try++ {
		t := mergequeue.NewTargets(false, []string{"//group" + strconv.Itoa(i) + "/" + strconv.Itoa(try) + ":test"})
		if !slices.ContainsFunc(groups, t.Intersects) {
			groups, i, try = append(groups, t), i+1, -1
		}
	}
	return groups
}

// replayed is the run durations a replay draws from, nil without one.
func replayed(cfg Config) []time.Duration {
	if cfg.Replay == nil {
		return nil
	}
	return cfg.Replay.Durations
}
