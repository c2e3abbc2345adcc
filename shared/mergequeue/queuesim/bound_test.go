package queuesim

import (
	"math"
	"testing"
)

// TestBound checks the closed forms against the sums they stand for.
func TestBound(t *testing.T) {
	t.Parallel()
	for _, p := range []float64{0, 0.02, 0.2} {
		for _, f := range []float64{0, 0.05} {
			for _, c := range []int{1, 5, 10} {
				a, sum := (1-p)*(1-f), 0.0
				for k := 1; k <= c; k++ {
					sum += math.Pow(a, float64(k))
				}
				if got := Bound(p, f, c); math.Abs(got-sum) > 1e-9 {
					t.Errorf("Bound(%v, %v, %d) = %v, want %v", p, f, c, got, sum)
				}
				if got := LanesBound(p, f, c, 1); math.Abs(got-sum) > 1e-9 {
					t.Errorf("one lane: LanesBound(%v, %v, %d, 1) = %v, want %v", p, f, c, got, sum)
				}
			}
		}
	}
	if got, want := Bound(0.2, 0, 10), 0.8*(1-math.Pow(0.8, 10))/0.2; math.Abs(got-want) > 1e-12 {
		t.Errorf("Bound(0.2, 0, 10) = %v, want q(1−q^C)/p = %v", got, want)
	}
	if got := LanesBound(0.1, 0, 10, 2); math.Abs(got-2*0.9*(1-math.Pow(0.9, 5))/0.1) > 1e-12 {
		t.Errorf("two lanes of five runs: %v", got)
	}
	// SharedLanesBound against its sum: k lanes, each with a binomial share
	// of the C runs.
	for _, k := range []int{1, 2, 5} {
		for _, c := range []int{1, 4, 10} {
			a, sum := 0.8*0.95, 0.0
			for x := 0; x <= c; x++ {
				share := float64(binomial(c, x)) * math.Pow(1/float64(k), float64(x)) * math.Pow(1-1/float64(k), float64(c-x))
				sum += float64(k) * share * passesBeforeFailure(a, float64(x))
			}
			if got := SharedLanesBound(0.2, 0.05, c, k); math.Abs(got-sum) > 1e-9 {
				t.Errorf("SharedLanesBound(0.2, 0.05, %d, %d) = %v, want %v", c, k, got, sum)
			}
		}
	}
	if got, want := SharedLanesBound(0.1, 0, 5, 1), Bound(0.1, 0, 5); math.Abs(got-want) > 1e-12 {
		t.Errorf("one shared lane: %v, want Bound's %v", got, want)
	}
	if got := EjectedPer100(0.05); math.Abs(got-100.0/19) > 1e-12 {
		t.Errorf("EjectedPer100(0.05) = %v", got)
	}
}

func binomial(n, k int) int {
	out := 1
	for i := range k {
		out = out * (n - i) / (i + 1)
	}
	return out
}
