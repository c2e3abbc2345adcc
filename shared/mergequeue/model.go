package mergequeue

import "math"

// The model of a queue's throughput, which the autopilot maximises and the
// simulator (package sim) holds the engine to.
//
// SINGLE mode, C test runs at once, batches of B PRs, a saturated queue
// and a fixed test time T: the runs of a generation start and end
// together. A batch passes with probability b = (1−p)^B·(1−f) (p the
// share of bad PRs, f the probability that a run without one fails
// anyway). The batches ahead of the first failing one merge: on average
// Σ_{k=1..C} b^k = b(1−b^C)/(1−b) of them. A single PR that fails simply
// leaves the line, and the next generation starts at once; a failed batch
// is bisected first, R rounds of T on its bisection slots, while the runs
// on top of it (every main slot) test the bad PR and are lost; then the
// PRs of the batch ahead of its culprit merge, and the next generation
// starts. A batch that failed on a flake passes on its rerun (optimization
// mode OFF), or all but its last PR pass. So a generation merges
// B·b(1−b^C)/(1−b) + (1−b^C)·g PRs in T·(1 + (1−b^C)·R), g the PRs of the
// failed batch that merge, and starts C + (1−b^C)·R·(C + bisection runs
// per round) runs.
//
// With B = 1 it is the bound of the merge-queue literature, q(1−q^C)/p
// when f = 0 (q = 1−p), and C runs a generation.

// Plan is what the model is asked about: the runs at once, the batch size
// (1: no batching), the bisection slots, and whether a failed batch is run
// again whole beside its first bisection round (optimization mode OFF).
type Plan struct {
	Concurrency, Batch, Bisection int
	Rerun                         bool
}

// Prediction is the model's figures for a plan.
type Prediction struct {
	// MergesPerRun is the PRs merged per test time T.
	MergesPerRun float64
	// RunsPerMerge is the CI runs started per merged PR.
	RunsPerMerge float64
}

// Predict is the model's prediction for plan at a bad-PR rate p and a
// flake rate f.
func Predict(p, f float64, plan Plan) Prediction {
	c, bsz := max(plan.Concurrency, 1), max(plan.Batch, 1)
	q := math.Pow(1-p, float64(bsz)) // no bad PR in a batch
	b := q * (1 - f)
	passes := PassesBeforeFailure(b, float64(c))
	fail := 1 - math.Pow(b, float64(c)) // some batch of the generation fails
	if bsz == 1 {
		if passes == 0 {
			return Prediction{RunsPerMerge: math.Inf(1)}
		}
		return Prediction{MergesPerRun: passes, RunsPerMerge: float64(c) / passes}
	}
	// The PRs of a failed batch that merge: those ahead of its first bad
	// PR, or the whole batch when it failed on a flake.
	badGiven, flakeGiven := 0.0, 0.0
	if 1-b > 0 {
		badGiven, flakeGiven = (1-q)/(1-b), q*f/(1-b)
	}
	g := badGiven*aheadOfFirstBad(p, bsz) + flakeGiven*float64(bsz)
	rounds, bisectRuns := bisection(bsz, max(plan.Bisection, 1), plan.Rerun)
	merges := float64(bsz)*passes + fail*g
	runs := float64(c) + fail*(float64(rounds)*float64(c)+float64(bisectRuns))
	if merges == 0 {
		return Prediction{RunsPerMerge: math.Inf(1)}
	}
	return Prediction{MergesPerRun: merges / (1 + fail*float64(rounds)), RunsPerMerge: runs / merges}
}

// PassesBeforeFailure is Σ_{k=1..n} a^k in closed form: the expected
// passes before the first failure among n positions that each pass with
// probability a (n may be fractional, for lanes).
func PassesBeforeFailure(a, n float64) float64 {
	if a == 1 {
		return n
	}
	return a * (1 - math.Pow(a, n)) / (1 - a)
}

// aheadOfFirstBad is the expected number of good PRs ahead of the first
// bad one in a batch of n that holds one: Σ_{j=1..n} (j−1)(1−p)^{j−1}p,
// over 1−(1−p)^n.
func aheadOfFirstBad(p float64, n int) float64 {
	if p <= 0 {
		return float64(n - 1)
	}
	sum, hold := 0.0, 1.0 // hold: (1−p)^{j−1}
	for j := 1; j <= n; j++ {
		sum += float64(j-1) * hold * p
		hold *= 1 - p
	}
	return sum / (1 - math.Pow(1-p, float64(n)))
}

// bisection is how many rounds the search for the culprit of a failed
// batch of n takes on s slots, and how many runs it starts: each round
// tests up to s prefixes evenly spread in what is left (bisect.go), the
// first beside the rerun of the whole batch when rerun is set.
func bisection(n, s int, rerun bool) (rounds, runs int) {
	for w := n; w > 1; rounds++ {
		k := min(s, w-1)
		if rerun && rounds == 0 {
			runs++
			k = min(max(s-1, 1), w-1)
		}
		runs += k
		w = (w + k) / (k + 1) // ceil(w/(k+1))
	}
	return rounds, runs
}

// Best is the plan of at most maxC runs at once and batches of at most
// maxB (1 or a power of two) that the model expects to merge the most per
// run time at a bad-PR rate p and a flake rate f, among those it expects,
// at a bad-PR rate pRuns, to start at most maxRuns CI runs per merge; of
// plans within 1% of the most, the one with the fewest runs per merge.
// When no plan stays within maxRuns, the one with the fewest. Bisection
// runs on as many slots as the plan's concurrency; rerun is optimization
// mode OFF.
func Best(p, pRuns, f float64, maxC, maxB int, maxRuns float64, rerun bool) (Plan, Prediction) {
	var best Plan
	var bestX Prediction
	found := false
	for c := 1; c <= max(maxC, 1); c++ {
		for b := 1; b <= max(maxB, 1); b *= 2 {
			plan := Plan{Concurrency: c, Batch: b, Bisection: c, Rerun: rerun}
			x := Predict(p, f, plan)
			if pRuns != p {
				x.RunsPerMerge = Predict(pRuns, f, plan).RunsPerMerge
			}
			within, bestWithin := x.RunsPerMerge <= maxRuns, bestX.RunsPerMerge <= maxRuns
			switch {
			case !found, within && !bestWithin:
			case !within && !bestWithin:
				if x.RunsPerMerge >= bestX.RunsPerMerge {
					continue
				}
			case !within:
				continue
			case x.MergesPerRun > bestX.MergesPerRun*1.01:
			case x.MergesPerRun >= bestX.MergesPerRun*0.99 && x.RunsPerMerge < bestX.RunsPerMerge:
			default:
				continue
			}
			best, bestX, found = plan, x, true
		}
	}
	return best, bestX
}
