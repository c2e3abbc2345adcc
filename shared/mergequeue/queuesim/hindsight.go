package queuesim

import (
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// Hindsight is one world under the autopilot, under the default settings
// and under every fixed (concurrency, batch size) of a grid: what the
// autopilot reached beside the best fixed setting chosen in hindsight.
type Hindsight struct {
	Autopilot, Default Result
	Fixed              []Fixed
	// Best is, for each phase, the index in Fixed of the setting that
	// merged the most per hour in it (of those within 1% of the most, the
	// one whose PRs merged soonest, by p90 time to merge: when the queue
	// keeps up, several settings merge as fast as PRs arrive);
	// BestOverall the same over the whole run.
	Best        []int
	BestOverall int
}

// Fixed is one fixed setting of the grid and its figures.
type Fixed struct {
	Concurrency, Batch int
	Result             Result
}

// CompareFixed runs base (its queue settings hold the autopilot's bounds)
// three ways: with the autopilot on; with it off, under base's own
// settings (createQueue's defaults unless base sets them); and at every
// concurrency of concurrencies and batch size of batches (1: no
// batching; bisection on as many slots as the concurrency) with it off.
// The runs go on at once, one goroutine each.
func CompareFixed(base Config, concurrencies, batches []int) (Hindsight, error) {
	on, off := true, false
	var cfgs []Config
	ap := base
	ap.Queue.Autopilot = &on
	def := base
	def.Queue.Autopilot = &off
	cfgs = append(cfgs, ap, def)
	var fixed []Fixed
	for _, c := range concurrencies {
		for _, b := range batches {
			cfg := base
			cfg.Queue.Autopilot = &off
			cfg.Queue.Concurrency, cfg.Queue.BisectionConcurrency = &c, &c
			batch, size := b > 1, b
			cfg.Queue.Batch, cfg.Queue.BatchingMinSize = &batch, &size
			cfgs = append(cfgs, cfg)
			fixed = append(fixed, Fixed{Concurrency: c, Batch: b})
		}
	}
	results := make([]Result, len(cfgs))
	failures := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Go(func() { results[i], failures[i] = Run(cfg) })
	}
	wg.Wait()
	for _, err := range failures {
		if err != nil {
			return Hindsight{}, err
		}
	}
	h := Hindsight{Autopilot: results[0], Default: results[1], Fixed: fixed}
	for i := range fixed {
		h.Fixed[i].Result = results[2+i]
	}
	for p := range h.Autopilot.Phases {
		h.Best = append(h.Best, best(h.Fixed, func(r Result) (float64, time.Duration) {
			return r.Phases[p].MergesPerHour, r.Phases[p].P90
		}))
	}
	h.BestOverall = best(h.Fixed, func(r Result) (float64, time.Duration) { return r.MergesPerHour, r.P90 })
	return h, nil
}

// best is the index of the setting with the most merges per hour, of
// those within 1% of the most the one with the lowest p90 time to merge.
func best(fixed []Fixed, figures func(Result) (perHour float64, p90 time.Duration)) int {
	most := 0.0
	for _, f := range fixed {
		perHour, _ := figures(f.Result)
		most = max(most, perHour)
	}
	out, soonest := -1, time.Duration(0)
	for i, f := range fixed {
		perHour, p90 := figures(f.Result)
		if perHour >= 0.99*most && (out < 0 || p90 < soonest) {
			out, soonest = i, p90
		}
	}
	return out
}

// AutopilotBounds are the queue settings of the autopilot with its bounds.
func AutopilotBounds(maxConcurrency, maxBatch int, maxRunsPerMerge float64) mergequeue.AutopilotPatch {
	on := true
	return mergequeue.AutopilotPatch{
		Autopilot: &on, AutopilotMaxConcurrency: &maxConcurrency, AutopilotMaxBatch: &maxBatch,
		AutopilotMaxCiRunsPerMerge: &maxRunsPerMerge,
	}
}

// Grid is the fixed settings CompareFixed tries within the autopilot's
// bounds: concurrencies 1, 2, 4, 6, 8, 12, 16, 24, 32, … up to maxC (and
// maxC itself), batch sizes 1, 2, 4, 8, … up to maxB.
func Grid(maxC, maxB int) (concurrencies, batches []int) {
	for c := 1; c < maxC; {
		concurrencies = append(concurrencies, c)
		switch {
		case c < 2:
			c++
		case c < 4:
			c *= 2
		default:
			c += c / 2
			c -= c % 2
		}
	}
	concurrencies = append(concurrencies, max(maxC, 1))
	for b := 1; b <= max(maxB, 1); b *= 2 {
		batches = append(batches, b)
	}
	return concurrencies, batches
}
