package queuesim

import (
	"math"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// Bound is the model's merges per test time of one testing line: SINGLE
// mode with C runs at once, no batching, a fixed test time, a saturated
// queue. The C runs of a generation start and end together; the PRs ahead
// of the first failing run merge, the rest are tested again in the next
// generation. A run passes with probability a = (1−p)(1−f), so a
// generation merges Σ_{k=1..C} a^k = a(1−a^C)/(1−a) PRs on average: with
// f = 0, q(1−q^C)/p (q = 1−p), and C when nothing fails. It is the
// engine's model (mergequeue.Predict) without batching.
func Bound(p, f float64, c int) float64 {
	return mergequeue.Predict(p, f, mergequeue.Plan{Concurrency: c, Batch: 1}).MergesPerRun
}

// LanesBound is Bound for k independent lanes that each get C/k of the
// runs: k·a(1−a^{C/k})/(1−a). It is the most k lanes can merge: the
// engine hands the runs out in submit order, not evenly (SharedLanesBound).
func LanesBound(p, f float64, c, k int) float64 {
	return float64(k) * passesBeforeFailure((1-p)*(1-f), float64(c)/float64(k))
}

// SharedLanesBound is the model of PARALLEL mode with each PR in one of k
// independent groups at random: every generation the C runs go to the
// waiting PRs in submit order, so a lane gets X ~ Binomial(C, 1/k) of them
// and merges Σ_{j≤X} a^j. With E[a^X] = (1−(1−a)/k)^C, the k lanes merge
// k·a(1−(1−(1−a)/k)^C)/(1−a) per T: less than LanesBound (the merges of a
// lane grow ever slower with its runs, so uneven shares lose), and Bound
// when k = 1.
func SharedLanesBound(p, f float64, c, k int) float64 {
	a := (1 - p) * (1 - f)
	if a == 1 {
		return float64(c)
	}
	return float64(k) * a * (1 - math.Pow(1-(1-a)/float64(k), float64(c))) / (1 - a)
}

// EjectedPer100 is the model's good PRs failed per 100 merges in the
// setting of Bound: a good run fails by flake before the first real
// failure f/(1−f) times per merge, whatever p and C.
func EjectedPer100(f float64) float64 { return 100 * f / (1 - f) }

// passesBeforeFailure is the model's Σ_{k=1..n} a^k.
func passesBeforeFailure(a, n float64) float64 { return mergequeue.PassesBeforeFailure(a, n) }
