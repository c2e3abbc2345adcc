package queuesim

import (
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// tick is the scheduler's period: deployed, it steps every active queue
// once a minute.
const tick = time.Minute

// next is the time of the next step: the next event (a run ending, an
// arrival, test results the engine waits for, or the time bound), or an
// earlier tick at which the engine would do something.
//
// Between events the world does not change, so a tick's step sees the
// observations of the last step and differs from it only in the time (the
// test results it is told of again were told before, and decided on). The
// engine's rules of time fire once the time reaches a threshold (a run's
// timeout, a retry after RetryInterval, a batching wait, the end of a
// failed run's wait for its test results) and stay fired, so if a step at
// the last tick before the event would do nothing, no earlier tick would
// either: one probe step, discarded, proves the ticks in between quiet and
// the clock jumps to the event. When the probe is not quiet, a binary
// search of probes finds the first tick that is not, and the loop steps
// there for real. The tests hold this to stepping every tick.
func (s *simulation) next() time.Time {
	event := s.limit
	if t, ok := s.world.ci.next(); ok && t.Before(event) {
		event = t
	}
	if t, ok := s.nextPoisson(); ok && t.Before(event) {
		event = t
	}
	if t, ok := s.world.nextUpload(s.snap); ok && t.Before(event) {
		event = t
	}
	first := s.now.Sub(start)/tick + 1    // the first tick after now
	last := (event.Sub(start) - 1) / tick // the last tick before the event
	if first > last {
		return event
	}
	if s.cfg.everyTick {
		return tickTime(first)
	}
	if s.quietAt(tickTime(last)) {
		return event
	}
	i := sort.Search(int(last-first), func(i int) bool { return !s.quietAt(tickTime(first + time.Duration(i))) })
	return tickTime(first + time.Duration(i))
}

func tickTime(k time.Duration) time.Time { return start.Add(k * tick) }

// quietAt reports whether a step at time t, with nothing new observed,
// would change nothing: no transition, no effect, no entry or run touched.
// The step is discarded, with the ids it made.
//
// It is Step on a copy of the snapshot, made by hand: the copy's entries
// go into a buffer the probes reuse (Step would allocate a fresh copy of a
// day of finished entries for each, most of a run's garbage), and
// StepConsuming writes them there in place; the transitions are clipped,
// as Step clips them, so that the probe's appends never reach the
// snapshot's.
func (s *simulation) quietAt(t time.Time) bool {
	s.probes++
	n := 0
	probeID := func() string { n++; return "probe-" + strconv.Itoa(n) }
	probe := s.snap
	s.probeEntries = append(s.probeEntries[:0], s.snap.Entries...)
	probe.Entries, probe.Transitions = s.probeEntries, slices.Clip(s.snap.Transitions)
	_, out := mergequeue.StepConsuming(probe, s.world.standing(s.snap, s.active), t, probeID)
	return len(out.Effects) == 0 && len(out.Transitions) == 0 && len(out.Entries) == 0 && len(out.Runs) == 0
}
