package queuesim

import (
	"testing"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// BenchmarkSim runs representative points of 2,000 PRs and reports their
// figures beside the time a simulation takes.
func BenchmarkSim(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"single/p=5%/C=5", Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, BadRate: 0.05}},
		{"single/p=20%/C=10", Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(10)}, BadRate: 0.2}},
		{"flaky/p=2%/f=5%/C=5", Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, BadRate: 0.02, FlakeRate: 0.05}},
		{"parallel/K=5/p=20%/C=10", Config{Queue: mergequeue.QueuePatch{Mode: ptr("PARALLEL"), Concurrency: ptr(10)}, BadRate: 0.2, Targets: 5}},
		{"poisson/rate=2.5/p=5%/C=5/spread=0.25", Config{Queue: mergequeue.QueuePatch{Concurrency: ptr(5)}, BadRate: 0.05,
			Arrival: Poisson, Rate: 2.5, Spread: 0.25}},
	} {
		c.cfg.PRs, c.cfg.TestTime, c.cfg.Seed = prs, testTime, 1
		b.Run(c.name, func(b *testing.B) {
			var r Result
			for b.Loop() {
				r = mustRun(b, c.cfg)
			}
			b.ReportMetric(r.MergesPerT, "merges/T")
			if r.HasBound {
				b.ReportMetric(r.Bound, "bound-merges/T")
			}
			b.ReportMetric(r.RunsPerMerge, "runs/merge")
			b.ReportMetric(r.EjectedPer100, "wrongly-ejected/100")
			b.ReportMetric(float64(r.Steps+r.Probes), "steps/op")
		})
	}
}
