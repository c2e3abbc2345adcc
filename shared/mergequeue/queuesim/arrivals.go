package queuesim

import (
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// arrive submits the PRs that arrive by now: with saturated arrivals, as
// many as keep the queue saturated; with Poisson arrivals, those whose
// time has come.
func (s *simulation) arrive() error {
	switch s.cfg.arrival() {
	case Saturated:
		for s.left() && s.waiting() < s.saturation() {
			if err := s.submit(); err != nil {
				return err
			}
		}
	case Replayed:
		for s.left() && !start.Add(s.cfg.Replay.Arrivals[len(s.world.prs)]).After(s.now) {
			if err := s.submit(); err != nil {
				return err
			}
		}
		if s.left() {
			s.nextArrival = start.Add(s.cfg.Replay.Arrivals[len(s.world.prs)])
		}
	case Poisson, Scheduled:
		for s.left() && !s.nextArrival.After(s.now) {
			if err := s.submit(); err != nil {
				return err
			}
			mean := float64(s.cfg.TestTime) / s.cfg.Rate
			if s.cfg.arrival() == Scheduled {
				mean = float64(time.Hour) / s.cfg.RateSchedule.at(len(s.world.prs))
			}
			s.nextArrival = s.nextArrival.Add(time.Duration(s.prRNG.ExpFloat64() * mean))
		}
	}
	return nil
}

// left reports whether PRs remain to be submitted.
func (s *simulation) left() bool { return len(s.world.prs) < s.cfg.PRs }

// nextPoisson is when the next PR arrives on its own, if one will.
func (s *simulation) nextPoisson() (time.Time, bool) {
	return s.nextArrival, s.cfg.arrival() != Saturated && s.left()
}

// waiting counts the submitted entries not yet tested: NOT_READY or
// PENDING.
func (s *simulation) waiting() int {
	n := 0
	for i := range s.snap.Entries {
		if st := s.snap.Entries[i].State; st == mergequeue.NotReady || st == mergequeue.Pending {
			n++
		}
	}
	return n
}

// saturation is how many untested PRs a saturated queue keeps: enough to
// fill every run twice over, batches included.
func (s *simulation) saturation() int {
	l := s.snap.Limits()
	return max(2*l.Concurrency*l.Batch, 8)
}
