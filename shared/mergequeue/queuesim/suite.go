package queuesim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// The flake rates of flaky tests: each flakes in 1 to 10% of runs.
const minFlake, maxFlake = 0.01, 0.10

// suite is the tests CI runs. Most never flake: they fail only when a bad
// PR among a run's heads breaks them, and test health holds them healthy.
// A few are flaky: each fails a run on its own with its flake rate,
// whatever the code.
type suite struct {
	flaky []flakyTest
	rng   *rand.Rand // the flaky tests' own stream: their rates, then their flakes
}

type flakyTest struct {
	shown mergequeue.FailedTest // as test health shows it when it fails
	rate  float64
}

// newSuite draws the flaky tests of a CI whose good runs fail with
// probability flakeRate (flakyRates); the first round(unknown·n) of the n,
// which come in random order, are flaky tests test health does not know
// as flaky: it holds them healthy.
func newSuite(rng *rand.Rand, flakeRate, unknown float64) suite {
	rates := flakyRates(rng, flakeRate)
	n := int(math.Round(unknown * float64(len(rates))))
	s := suite{flaky: make([]flakyTest, len(rates)), rng: rng}
	for i, r := range rates {
		status := "flaky"
		if i < n {
			status = "healthy"
		}
		s.flaky[i] = flakyTest{mergequeue.FailedTest{Name: "flaky-" + strconv.Itoa(i+1), Status: status}, r}
	}
	return s
}

// flakes draws the flaky tests that fail in one run. It draws one number
// per flaky test in every run, so one run's flakes never shift the random
// numbers of the runs after it.
func (s suite) flakes() []mergequeue.FailedTest {
	var out []mergequeue.FailedTest
	for _, t := range s.flaky {
		if s.rng.Float64() < t.rate {
			out = append(out, t.shown)
		}
	}
	return out
}

// broken is the test a bad PR breaks: a test that never flakes, healthy
// in test health.
func broken(pr int) mergequeue.FailedTest {
	return mergequeue.FailedTest{Name: "broken-by-pr-" + strconv.Itoa(pr), Status: "healthy"}
}

// flakyRates draws the flake rates of the flaky tests of a CI whose good
// runs fail with probability f: log-uniform in [1%, 10%], so that rare
// flakes are the common kind, as many as it takes to reach f, then fitted
// so that a run fails with probability exactly f: 1 − Π(1 − rᵢ) = f. Below
// 1%, or at 100%, one test flakes at f.
func flakyRates(rng *rand.Rand, f float64) []float64 {
	if f == 0 {
		return nil
	}
	if f < minFlake || f == 1 {
		return []float64{f}
	}
	// In hazards h = −ln(1 − r) the tests add up: Σhᵢ = −ln(1 − f).
	hazard := func(r float64) float64 { return -math.Log1p(-r) }
	want, lo, hi := hazard(f), hazard(minFlake), hazard(maxFlake)
	var hs []float64
	for sum := 0.0; sum < want; {
		h := hazard(minFlake * math.Pow(maxFlake/minFlake, rng.Float64()))
		hs, sum = append(hs, h), sum+h
	}
	if float64(len(hs))*lo > want {
		hs = hs[:len(hs)-1] // too many to fit even at 1% each; one fewer fits at 10% each
	}
	// Scale the hazards by c, each kept within [lo, hi]: their sum grows
	// with c from n·lo to n·hi, which holds want, so bisection finds the c
	// that makes it want.
	fitted := func(c, h float64) float64 { return min(max(c*h, lo), hi) }
	sum := func(c float64) float64 {
		s := 0.0
		for _, h := range hs {
			s += fitted(c, h)
		}
		return s
	}
	cLo, cHi := 0.0, hi/slices.Min(hs)
	for range 100 {
		if c := (cLo + cHi) / 2; sum(c) < want {
			cLo = c
		} else {
			cHi = c
		}
	}
	rates := make([]float64, len(hs))
	for i, h := range hs {
		rates[i] = -math.Expm1(-fitted(cHi, h))
	}
	return rates
}
