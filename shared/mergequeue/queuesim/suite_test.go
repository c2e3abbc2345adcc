package queuesim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFlakyTestsMakeTheFlakeRate: the flaky tests flake in 1 to 10% of
// runs each (one test at f when f is below 1%), and a run fails from a
// flake with probability f: exactly by their rates, and within four
// standard deviations over 200,000 runs drawn as CI draws them. Test
// health holds the unknown share of them healthy.
func TestFlakyTestsMakeTheFlakeRate(t *testing.T) {
	t.Parallel()
	const runs = 200_000
	for _, f := range []float64{0.005, 0.02, 0.05, 0.2, 0.6} {
		s := newSuite(rand.New(rand.NewPCG(1, 3)), f, 0.5)
		pass := 1.0
		unknown := 0
		for _, ft := range s.flaky {
			if (ft.rate < minFlake || ft.rate > maxFlake) && len(s.flaky) > 1 {
				t.Errorf("f=%g: a flaky test flakes in %.4f of runs, want 1 to 10%%", f, ft.rate)
			}
			pass *= 1 - ft.rate
			if ft.shown.Status == "healthy" {
				unknown++
			}
		}
		if math.Abs(1-pass-f) > 1e-12 {
			t.Errorf("f=%g: %d flaky tests fail a run with probability %v", f, len(s.flaky), 1-pass)
		}
		if want := int(math.Round(0.5 * float64(len(s.flaky)))); unknown != want {
			t.Errorf("f=%g: %d of %d flaky tests unknown, want %d", f, unknown, len(s.flaky), want)
		}
		flaked := 0
		for range runs {
			if len(s.flakes()) > 0 {
				flaked++
			}
		}
		got, sd := float64(flaked)/runs, math.Sqrt(f*(1-f)/runs)
		t.Logf("f=%g: %d flaky tests; %.4f of runs flaked", f, len(s.flaky), got)
		if math.Abs(got-f) > 4*sd {
			t.Errorf("f=%g: %.4f of %d runs flaked, want within %.4f", f, got, runs, 4*sd)
		}
	}
	if s := newSuite(rand.New(rand.NewPCG(1, 3)), 0, 0); len(s.flaky) != 0 {
		t.Errorf("f=0: %d flaky tests", len(s.flaky))
	}
}
