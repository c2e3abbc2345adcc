package queuesim

import (
	"fmt"
	"testing"
	"time"
)

// testTime is T in every test: half an hour, a typical CI run.
const testTime = 30 * time.Minute

// prs is how many PRs each point submits: enough that the throughput's
// spread from seed to seed is about 1% at the noisiest point of the grid
// (p = 10%, C = 10), a fifth of the 5% the model check allows.
const prs = 2000

func ptr[T any](v T) *T { return &v }

func mustRun(t testing.TB, cfg Config) Result {
	t.Helper()
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// label names a point of the grid.
func label(cfg Config) string {
	return fmt.Sprintf("p=%g%%/C=%d", 100*cfg.BadRate, *cfg.Queue.Concurrency)
}

// longSweep skips a long sweep under the race detector: it drives the
// engine on one goroutine per run for minutes of CPU without it (several
// times that with it) and the detector has nothing to find there; it runs
// in the suite's run without -race.
func longSweep(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("a long single-goroutine sweep: run it without -race")
	}
}
