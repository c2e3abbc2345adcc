package healthsim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Config is one simulated history and the repository's settings.
type Config struct {
	Healthy int // tests that never fail on their own
	Flaky   int // tests that fail a run with a rate drawn from Rates
	// Rates is the distribution of the flaky tests' failure rates.
	Rates Distribution
	// Regressions are healthy tests that one commit of main breaks (every
	// run fails from it on) and RegressionCommits commits later fix.
	Regressions       int
	RegressionCommits int
	// Fixes are flaky tests (among those failing 2% of runs or more, so
	// that they have flaked before) whose flakiness one commit of main
	// in the middle third of the history fixes.
	Fixes int

	Commits   int     // commits of main
	Days      int     // over this many days
	PRRuns    int     // CI runs of each commit's pull request branch before it merges
	JobSize   int     // tests per CI job, one upload each
	Retries   int     // retries of a failed job on the same commit
	InfraRate float64 // probability that an attempt is an infrastructure outage: every test of it fails
	Seed      uint64

	// Settings are the repository's health settings; nil fields take the
	// defaults, as a repository's do.
	Settings testhealth.HealthSettings
}

// Default is the history of the issue that asked for this simulator: flake
// rates like a published rerun study's (most under 1%, median near 0.5%, a
// tail to 50%), 60 commits of main over 14 days, each pull request run
// once, one retry of a failed job, a few regressions and some flaky tests
// fixed mid-history.
func Default() Config {
	return Config{
		Healthy: 1000, Flaky: 400, Rates: PublishedRates(),
		Regressions: 5, RegressionCommits: 6, Fixes: 20,
		Commits: 60, Days: 14, PRRuns: 1, JobSize: 100, Retries: 1, InfraRate: 0.01,
		Seed: 1,
	}
}

func (c Config) validate() error {
	var problems []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	check(c.Healthy >= 0 && c.Flaky >= 0 && c.Regressions >= 0 && c.Fixes >= 0, "test counts must not be negative")
	check(c.Healthy+c.Flaky+c.Regressions > 0, "there must be at least one test")
	check(c.Regressions <= c.Healthy, "regressions are healthy tests: at most %d, got %d", c.Healthy, c.Regressions)
	check(c.Fixes <= c.Flaky, "fixed tests are flaky tests: at most %d, got %d", c.Flaky, c.Fixes)
	check(c.Commits >= 3, "there must be at least 3 commits of main, got %d", c.Commits)
	check(c.Days >= 1 && c.Days <= 365, "days must be from 1 to 365, got %d", c.Days)
	check(c.PRRuns >= 0 && c.PRRuns <= 10, "pull request runs must be from 0 to 10, got %d", c.PRRuns)
	check(c.JobSize >= 1, "the job size must be at least 1, got %d", c.JobSize)
	check(c.Retries >= 0 && c.Retries <= 5, "retries must be from 0 to 5, got %d", c.Retries)
	check(c.InfraRate >= 0 && c.InfraRate < 1, "the infrastructure outage rate must be from 0 to below 1, got %v", c.InfraRate)
	check(c.RegressionCommits >= 0, "regression commits must not be negative, got %d", c.RegressionCommits)
	check(len(c.Rates.points) >= 2 || c.Flaky == 0, "the rate distribution needs at least two points")
	s := testhealth.SettingsOf(c.Settings, "main")
	if err := s.Validate(); err != nil {
		problems = append(problems, errors.New(errs.MessageOf(err)))
	}
	if len(problems) > 0 {
		return errs.E(errs.Invalid, "%s", errors.Join(problems...).Error())
	}
	return nil
}

// Distribution is a distribution of failure rates given by its quantile
// function at a few points (a cumulative share and the rate at it),
// interpolated linearly in the logarithm of the rate between them.
type Distribution struct {
	points []quantile
}

type quantile struct{ share, rate float64 }

// PublishedRates is the default distribution, shaped like the published
// per-test failure rates of a rerun study of real flaky tests, each rerun
// thousands of times: a quarter below 0.2%, half below 0.5%, three
// quarters below 0.9%, 90% below 3%, 97% below 15%, all below 50%.
func PublishedRates() Distribution {
	d, _ := ParseDistribution("0:0.0005,0.25:0.002,0.5:0.005,0.75:0.009,0.9:0.03,0.97:0.15,1:0.5")
	return d
}

// ParseDistribution reads "share:rate,share:rate,…": shares from 0 to 1,
// both ends given, increasing; rates above 0 and at most 1, not
// decreasing.
func ParseDistribution(s string) (Distribution, error) {
	var d Distribution
	for _, part := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(part), ":")
		share, err1 := strconv.ParseFloat(a, 64)
		rate, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			return Distribution{}, errs.E(errs.Invalid, "rates: %q is not share:rate", part)
		}
		if rate <= 0 || rate > 1 {
			return Distribution{}, errs.E(errs.Invalid, "rates: the rate of %q must be above 0 and at most 1", part)
		}
		if n := len(d.points); n > 0 && (share <= d.points[n-1].share || rate < d.points[n-1].rate) {
			return Distribution{}, errs.E(errs.Invalid, "rates: shares must increase and rates not decrease, at %q", part)
		}
		d.points = append(d.points, quantile{share, rate})
	}
	if len(d.points) < 2 || d.points[0].share != 0 || d.points[len(d.points)-1].share != 1 {
		return Distribution{}, errs.E(errs.Invalid, "rates: give the rates at share 0 and at share 1, and any between")
	}
	return d, nil
}

// Rate is the rate at cumulative share u (0..1).
func (d Distribution) Rate(u float64) float64 {
	i := sort.Search(len(d.points), func(i int) bool { return d.points[i].share >= u })
	if i == 0 {
		return d.points[0].rate
	}
	if i >= len(d.points) {
		return d.points[len(d.points)-1].rate
	}
	lo, hi := d.points[i-1], d.points[i]
	f := (u - lo.share) / (hi.share - lo.share)
	return math.Exp(math.Log(lo.rate) + f*(math.Log(hi.rate)-math.Log(lo.rate)))
}

// String is the distribution as ParseDistribution reads it.
func (d Distribution) String() string {
	parts := make([]string, len(d.points))
	for i, p := range d.points {
		parts[i] = strconv.FormatFloat(p.share, 'g', -1, 64) + ":" + strconv.FormatFloat(p.rate, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
