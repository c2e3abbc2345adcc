package sim

import (
	"sync"

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
	// one with the fewest CI runs per merge); BestOverall the same over
	// the whole run.
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
		h.Best = append(h.Best, best(h.Fixed, func(r Result) (float64, float64) {
			return r.Phases[p].MergesPerHour, r.Phases[p].RunsPerMerge
		}))
	}
	h.BestOverall = best(h.Fixed, func(r Result) (float64, float64) { return r.MergesPerHour, r.RunsPerMerge })
	return h, nil
}

// best is the index of the setting with the most merges per hour, of
// those within 1% of the most the one with the fewest CI runs per merge.
func best(fixed []Fixed, figures func(Result) (perHour, runsPerMerge float64)) int {
	most := 0.0
	for _, f := range fixed {
		most = max(most, first(figures(f.Result)))
	}
	out, fewest := -1, 0.0
	for i, f := range fixed {
		perHour, runs := figures(f.Result)
		if perHour >= 0.99*most && (out < 0 || runs < fewest) {
			out, fewest = i, runs
		}
	}
	return out
}

func first(a, _ float64) float64 { return a }

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
