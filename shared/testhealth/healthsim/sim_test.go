package healthsim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// TestDefaultHistory replays the default history (the one of issue 32:
// published flake rates, 60 commits of main over 14 days, one retry of a
// failed job, tests fixed mid-history) through the current classifier and
// the one before, and holds the current one to the figures. Its
// table is printed with -v:
//
//	go test -run TestDefaultHistory -v ./shared/testhealth/healthsim/
func TestDefaultHistory(t *testing.T) {
	if underRace {
		t.Skip("a long history: run without the race detector (make test does)")
	}
	t.Parallel()
	cfg := Default()
	rs, err := Run(cfg, Current(cfg.Settings), previous(cfg.Settings))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, cfg, rs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	cur, prev := rs[0], rs[1]
	if cur.All.Tests < 100 {
		t.Fatalf("only %d flaky tests failed in the history: too few to judge recall", cur.All.Tests)
	}
	if got := float64(cur.All.Listed) / float64(cur.All.Tests); got < 0.9 {
		t.Errorf("recall at the end %d of %d (%.0f%%), want at least 90%%", cur.All.Listed, cur.All.Tests, 100*got)
	}
	for _, check := range []struct {
		name string
		got  int
	}{
		{"healthy tests ever flagged", cur.FalsePositives},
		{"flaky tests listed broken with pass-on-retry evidence in its window", cur.FlakyBrokenOnEvidence},
		{"flaky tests with more than 2 status changes", cur.FlakyOverTwo},
		{"regressions not broken within 3 commits", cur.Regressions - cur.RegressionsWithin3},
		{"fixed tests healthy later than their clean runs and recovery days allowed", cur.FixedLate},
		{"changes gone back on one commit", cur.SameCommitFlips},
	} {
		if check.got != 0 {
			t.Errorf("%s: %d, want 0", check.name, check.got)
		}
	}
	if cur.FixedHealthy == 0 {
		t.Error("no fixed test was healthy again by the end")
	}
	// The history shows what the issue saw of the classifier before: the
	// comparison is worth printing only if the simulator tells them apart.
	if prev.FlakyBrokenOnEvidence == 0 && prev.FlakyOverTwo == 0 {
		t.Errorf("the classifier before listed no flaky test broken on pass-on-retry evidence and changed none more than twice: the history does not show the issue's flapping")
	}
	if prev.All.Listed >= cur.All.Listed {
		t.Errorf("the classifier before recalled %d flaky tests, the current one %d: the history does not show its early recoveries", prev.All.Listed, cur.All.Listed)
	}
}

// small is a short history that runs in a fraction of a second, under the
// race detector too.
func small(seed uint64) Config {
	cfg := Default()
	cfg.Healthy, cfg.Flaky, cfg.Regressions, cfg.Fixes = 60, 60, 2, 4
	cfg.Commits, cfg.Days, cfg.JobSize = 20, 5, 30
	cfg.Rates, _ = ParseDistribution("0:0.01,0.5:0.05,1:0.5")
	cfg.Seed = seed
	return cfg
}

// TestSameSeedSameResult: a run is a function of its Config; another seed
// gives another history.
func TestSameSeedSameResult(t *testing.T) {
	t.Parallel()
	first, err := Run(small(7))
	if err != nil {
		t.Fatal(err)
	}
	second, _ := Run(small(7))
	if !reflect.DeepEqual(first, second) {
		t.Errorf("the same seed gave two results:\n%+v\n%+v", first, second)
	}
	other, _ := Run(small(8))
	if reflect.DeepEqual(first, other) {
		t.Error("another seed gave the same result: the seed is not used")
	}
}

// TestShortHistory holds the current classifier to the rules on a
// short history with a high share of flaky tests: regressions broken by
// their third commit and never flaky, healthy tests never flagged, no
// flaky test broken while it passes on retry, no change gone back on one
// commit.
func TestShortHistory(t *testing.T) {
	t.Parallel()
	rs, err := Run(small(3))
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if r.Detected == 0 || r.Regressions != 2 || r.Uploads == 0 {
		t.Fatalf("a history with nothing in it: %+v", r)
	}
	got := map[string]int{
		"healthy tests ever flagged":              r.FalsePositives,
		"flaky tests broken on evidence":          r.FlakyBrokenOnEvidence,
		"regressions ever flaky":                  r.RegressionsFlaky,
		"regressions not broken within 3 commits": r.Regressions - r.RegressionsWithin3,
		"changes gone back on one commit":         r.SameCommitFlips,
		"fixed tests healthy late":                r.FixedLate,
	}
	want := map[string]int{}
	for k := range got {
		want[k] = 0
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("figures (-got +want):\n%s", diff)
	}
}

// TestInfrastructureOutagesFlagNothing: outages fail every test of their
// job, and the job's retry passes; the infrastructure guard sets the
// outage aside, so no healthy test is flagged, by pass-on-retry or
// otherwise, though every attempt in ten is an outage.
func TestInfrastructureOutagesFlagNothing(t *testing.T) {
	t.Parallel()
	cfg := small(5)
	cfg.Flaky, cfg.Fixes, cfg.Regressions, cfg.InfraRate = 0, 0, 0, 0.1
	rs, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; r.Guarded == 0 || r.FalsePositives != 0 || r.StatusChanges != 0 {
		t.Errorf("%d uploads set aside, %d healthy tests flagged, %d status changes; want some, 0 and 0", r.Guarded, r.FalsePositives, r.StatusChanges)
	}
	// Without the guard, the outages' failures and their retries' passes
	// are pass-on-retry evidence on every test of the job.
	cfg.Settings.InfraGuard = new(false)
	rs, _ = Run(cfg)
	if r := rs[0]; r.FalsePositives == 0 {
		t.Error("with the guard off, outages flagged no healthy test: the outages do not reach the classifier")
	}
}

func TestDistribution(t *testing.T) {
	d := PublishedRates()
	for _, tt := range []struct{ u, want float64 }{{0, 0.0005}, {0.5, 0.005}, {1, 0.5}, {0.9, 0.03}} {
		if got := d.Rate(tt.u); got < tt.want*0.999 || got > tt.want*1.001 {
			t.Errorf("Rate(%v) = %v, want %v", tt.u, got, tt.want)
		}
	}
	// Between two points, linear in the logarithm: the geometric mean at
	// the middle.
	if got := d.Rate(0.375); got < 0.00316 || got > 0.00317 {
		t.Errorf("Rate(0.375) = %v, want √(0.002·0.005) = 0.003162", got)
	}
	if again, err := ParseDistribution(d.String()); err != nil || !reflect.DeepEqual(again, d) {
		t.Errorf("String does not read back: %q %v", d.String(), err)
	}
	for _, bad := range []string{"", "0:0.1", "0.1:0.1,1:0.2", "0:0.1,0.5", "0:0.2,1:0.1", "0:0,1:0.1", "0:0.1,1:2", "0:0.1,0:0.2,1:0.3"} {
		if _, err := ParseDistribution(bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("ParseDistribution(%q) = %v, want an invalid-input error", bad, err)
		}
	}
}

func TestConfigIsValidated(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"no commits":           func(c *Config) { c.Commits = 1 },
		"too many regressions": func(c *Config) { c.Regressions = c.Healthy + 1 },
		"negative retries":     func(c *Config) { c.Retries = -1 },
		"a bad setting":        func(c *Config) { c.Settings.Streak = new(0) },
		"outages always":       func(c *Config) { c.InfraRate = 1 },
	} {
		cfg := small(1)
		mutate(&cfg)
		if _, err := Run(cfg); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: %v, want an invalid-input error", name, err)
		}
	}
	if _, err := Run(small(1), Current(testhealth.HealthSettings{})); err != nil {
		t.Errorf("a good config: %v", err)
	}
}
