package healthsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// start is when every simulated history begins.
var start = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// retryDelay is how long after a failed attempt its job's retry runs.
const retryDelay = 20 * time.Minute

// kind is what a simulated test does.
type kind int

const (
	healthy    kind = iota
	flaky           // fails a run with its rate
	regression      // healthy until a commit breaks it, then fails every run until another fixes it
	fixed           // flaky until a commit fixes it
)

// test is one simulated test.
type test struct {
	id   string
	kind kind
	rate float64 // flaky and fixed: the rate at which it fails a run
	// at and until are main commit indices: a regression fails from
	// commit at up to (not including) until (-1: never fixed); a fixed
	// test flakes before commit at.
	at, until int
}

// failing reports whether t fails every run on the code of main commit c.
func (t test) broken(c int) bool {
	return t.kind == regression && c >= t.at && (t.until < 0 || c < t.until)
}

// flaking reports whether t flakes on the code of main commit c.
func (t test) flaking(c int) bool {
	return t.kind == flaky || t.kind == fixed && c < t.at
}

// upload is one attempt of one CI job: its tests' outcomes.
type upload struct {
	id          string
	at          time.Time
	sha, branch string
	commit      int  // the main commit whose code ran
	main        bool // on main (else the commit's pull request branch)
	tests       []int
	failed      []bool // per test of tests
	infra       bool
}

// history is a whole simulated CI history: every run's outcome, drawn once
// from the seed, the same for every classifier replayed through it.
type history struct {
	tests   []test
	uploads []upload // in time order
	commits []time.Time
	end     time.Time
}

// generate draws the history of cfg. The draws follow one another from
// one seeded source, in this order: every step takes its share of it.
func generate(cfg Config) history {
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6865616c746873)) // "healths"
	var h history
	h.tests = drawTests(cfg, rng)
	drawRegressions(cfg, rng, h.tests)
	drawFixes(cfg, rng, h.tests)
	jobs := drawJobs(cfg, rng, len(h.tests))
	var runs []ciRun
	h.commits, runs = drawCommits(cfg, rng)
	h.uploads = drawUploads(cfg, rng, h.tests, jobs, runs)
	slices.SortStableFunc(h.uploads, func(a, b upload) int { return a.at.Compare(b.at) })
	h.end = h.uploads[len(h.uploads)-1].at.Add(time.Hour)
	return h
}

// drawTests draws the tests: cfg.Healthy healthy ones, then cfg.Flaky
// flaky ones with their rates.
func drawTests(cfg Config, rng *rand.Rand) []test {
	var tests []test
	for i := range cfg.Healthy + cfg.Flaky {
		t := test{id: fmt.Sprintf("t%05d", i), at: -1, until: -1}
		if i >= cfg.Healthy {
			t.kind, t.rate = flaky, cfg.Rates.Rate(rng.Float64())
		}
		tests = append(tests, t)
	}
	return tests
}

// drawRegressions breaks healthy tests at a commit in the first two
// thirds, fixed RegressionCommits later.
func drawRegressions(cfg Config, rng *rand.Rand, tests []test) {
	for _, i := range rng.Perm(cfg.Healthy)[:cfg.Regressions] {
		t := &tests[i]
		t.kind, t.at = regression, rng.IntN(cfg.Commits*2/3)
		if cfg.RegressionCommits > 0 {
			t.until = t.at + cfg.RegressionCommits
		}
	}
}

// drawFixes fixes flaky tests that have flaked (2% of runs or more, else
// the most flaky) in the middle third.
func drawFixes(cfg Config, rng *rand.Rand, tests []test) {
	var candidates []int
	for i := cfg.Healthy; i < len(tests); i++ {
		candidates = append(candidates, i)
	}
	slices.SortStableFunc(candidates, func(a, b int) int {
		ra, rb := tests[a].rate >= 0.02, tests[b].rate >= 0.02
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		case !ra && tests[a].rate != tests[b].rate:
			if tests[a].rate > tests[b].rate {
				return -1
			}
			return 1
		}
		return 0
	})
	eligible := 0
	for _, i := range candidates {
		if tests[i].rate >= 0.02 {
			eligible++
		}
	}
	pick := candidates[:max(eligible, cfg.Fixes)]
	rng.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
	for _, i := range pick[:cfg.Fixes] {
		t := &tests[i]
		t.kind, t.at = fixed, cfg.Commits/3+rng.IntN(max(cfg.Commits/3, 1))
	}
}

// drawJobs deals the n tests, in a random order, into jobs of JobSize.
func drawJobs(cfg Config, rng *rand.Rand, n int) [][]int {
	order := rng.Perm(n)
	var jobs [][]int
	for lo := 0; lo < n; lo += cfg.JobSize {
		job := slices.Clone(order[lo:min(lo+cfg.JobSize, n)])
		slices.Sort(job)
		jobs = append(jobs, job)
	}
	return jobs
}

// ciRun is one CI run of a commit: on main, or on its pull request's
// branch.
type ciRun struct {
	at          time.Time
	sha, branch string
	commit      int
	main        bool
}

// drawCommits spreads the commits of main over the days, each with its
// pull request's runs shortly before it: their times, and every CI run in
// time order.
func drawCommits(cfg Config, rng *rand.Rand) ([]time.Time, []ciRun) {
	spacing := time.Duration(cfg.Days) * 24 * time.Hour / time.Duration(cfg.Commits)
	var commits []time.Time
	var runs []ciRun
	for c := range cfg.Commits {
		jitter := time.Duration((rng.Float64() - 0.5) * float64(spacing) / 2)
		at := start.Add(spacing*time.Duration(c) + spacing/2 + jitter).Truncate(time.Second)
		commits = append(commits, at)
		for k := range cfg.PRRuns {
			runs = append(runs, ciRun{
				at:  at.Add(-spacing / 4 * time.Duration(cfg.PRRuns-k) / time.Duration(cfg.PRRuns)),
				sha: fmt.Sprintf("pr%03d-%d", c, k), branch: fmt.Sprintf("pr-%d", c), commit: c,
			})
		}
		runs = append(runs, ciRun{at: at, sha: fmt.Sprintf("main%03d", c), branch: "main", commit: c, main: true})
	}
	slices.SortStableFunc(runs, func(a, b ciRun) int { return a.at.Compare(b.at) })
	return commits, runs
}

// drawUploads draws the uploads of every job of every run: an attempt,
// then a retry after each failed one, up to cfg.Retries.
func drawUploads(cfg Config, rng *rand.Rand, tests []test, jobs [][]int, runs []ciRun) []upload {
	var uploads []upload
	for _, r := range runs {
		for j, job := range jobs {
			for attempt := 0; attempt <= cfg.Retries; attempt++ {
				u := upload{
					id: fmt.Sprintf("%s-j%02d-a%d", r.sha, j, attempt), sha: r.sha, branch: r.branch,
					at:     r.at.Add(time.Duration(j)*time.Second + time.Duration(attempt)*retryDelay),
					commit: r.commit, main: r.main, tests: job, failed: make([]bool, len(job)),
					infra: rng.Float64() < cfg.InfraRate,
				}
				any := false
				for k, i := range job {
					t := tests[i]
					f := u.infra || t.broken(r.commit) || t.flaking(r.commit) && rng.Float64() < t.rate
					u.failed[k] = f
					any = any || f
				}
				uploads = append(uploads, u)
				if !any {
					break
				}
			}
		}
	}
	return uploads
}
