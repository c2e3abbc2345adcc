package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSim: `mainguard sim` runs the engine on a simulated world and prints
// every figure, the model's bound beside the measured throughput; a
// setting the engine refuses is a command-line mistake, a queue that never
// finishes a failure.
func TestSim(t *testing.T) {
	t.Parallel()
	out, errOut, code := mg(t, nil, "sim", "--prs", "200", "--p", "0.1", "--concurrency", "3", "--f", "0.02")
	if code != 0 || errOut != "" {
		t.Fatalf("sim: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"200 PRs (20 bad) through a SINGLE queue of concurrency 3",
		"\nmerged ", "\ngood PRs failed (wrongly ejected) ", "\nbad PRs failed ", "\ncancelled ", "\nCI runs started ",
		"\nvirtual time ", "\nCI runs per merged PR ", "\nwrongly ejected per 100 merges ", "\nevents ", "pull_request.merged ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not show %q:\n%s", want, out)
		}
	}
	for _, re := range []string{
		`\nbad PRs merged +0\n`,
		`\nmerges per T +\d+\.\d{3} +bound 2\.346, ratio \d\.\d{3}`, // Bound(0.1, 0.02, 3)
		`\ntime in queue of merged PRs +mean \S+, p50 \S+, p90 \S+, p95 \S+\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output does not match %s:\n%s", re, out)
		}
	}

	out, _, code = mg(t, nil, "sim", "--prs", "100", "--arrival", "poisson", "--rate", "1", "--spread", "0.2")
	if code != 0 || !strings.Contains(out, "no bound: the model needs") {
		t.Errorf("poisson arrivals: exit %d\n%s", code, out)
	}
	out, _, code = mg(t, nil, "sim", "--prs", "200", "--mode", "parallel", "--concurrency", "4", "--targets", "2")
	if code != 0 || !strings.Contains(out, "through a PARALLEL queue") || !strings.Contains(out, "bound 3.660") || // SharedLanesBound(0.05, 0, 4, 2)
		!regexp.MustCompile(`\n2 evenly loaded lanes +3\.705 `).MatchString(out) { // LanesBound(0.05, 0, 4, 2)
		t.Errorf("PARALLEL mode with 2 target groups: exit %d\n%s", code, out)
	}

	out, _, code = mg(t, nil, "sim", "--sweep", "--prs", "100")
	rows := regexp.MustCompile(`(?m)^ *\d+% +\d+ +\d+\.\d{3} +\d+\.\d{3} +\d\.\d{3} +\d+\.\d{2} +\d+\.\d{2} *$`).FindAllString(out, -1)
	if code != 0 || !strings.Contains(out, "merges/T") || !strings.Contains(out, "wrongly ejected/100") || len(rows) != 12 {
		t.Errorf("sim --sweep: exit %d, %d rows\n%s", code, len(rows), out)
	}

	// A moving world under the autopilot: p 2% then 12%, a burst of
	// arrivals, log-normal run times; a line per phase, and the changes.
	out, _, code = mg(t, nil, "sim", "--prs", "300", "--p-schedule", "0.02@0,0.12@150", "--arrivals", "8@0,60@100,8@150",
		"--lognormal", "0.3", "--autopilot", "--autopilot-max-concurrency", "8")
	phases := regexp.MustCompile(`(?m)^ +[12] +(0-149|150-299) +(2|12)% +this run +\d+ +\d+\.\d{2} .* 0$`).FindAllString(out, -1)
	if code != 0 || len(phases) != 2 || !regexp.MustCompile(`\nautopilot: [1-9]\d* changes\n +\S+ +concurrency 1 → `).MatchString(out) ||
		!strings.Contains(out, " queue of concurrency 1 at the start, the autopilot choosing up to 8 and batches up to 8; ") ||
		!regexp.MustCompile(`merge_queue\.autopilot_changed [1-9]`).MatchString(out) || !regexp.MustCompile(`\nbad PRs merged +0\n`).MatchString(out) {
		t.Errorf("a moving world under the autopilot: exit %d, %d phase lines\n%s", code, len(phases), out)
	}

	// The same world beside every fixed setting within the autopilot's
	// bounds (concurrency ≤ 2, batch size ≤ 2): the sweep is printed, and
	// the best fixed setting is the sweep's best.
	out, _, code = mg(t, nil, "sim", "--prs", "100", "--p-schedule", "0.02@0,0.12@50", "--arrivals", "8@0,60@30,8@50",
		"--lognormal", "0.3", "--compare-fixed", "--autopilot-max-concurrency", "2", "--autopilot-max-batch", "2")
	sweep := regexp.MustCompile(`(?m)^ +C=(\d) B=(\d) +(\d+\.\d\d), \d+\.\d\d +\d+\.\d\d, \d+\.\d\d +\d+\.\d\d, \d+\.\d\d$`).FindAllStringSubmatch(out, -1)
	bestFixed := regexp.MustCompile(`(?m)^ +best fixed C=(\d) B=(\d) +(\d+\.\d\d) `).FindStringSubmatch(out)
	var settings []string
	top, topRate := "", -1.0
	for _, row := range sweep {
		settings = append(settings, row[1]+"×"+row[2])
		if v, _ := strconv.ParseFloat(row[3], 64); v > topRate {
			top, topRate = row[3], v
		}
	}
	if code != 0 || strings.Join(settings, " ") != "1×1 1×2 2×1 2×2" || bestFixed == nil || bestFixed[3] != top ||
		!regexp.MustCompile(`\nautopilot: ×\d+\.\d\d the default's merges per hour, ×\d+\.\d\d the best fixed setting's\n`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ +2 +50-99 +12% +best of phase 2: C=\d B=\d +44 `).MatchString(out) {
		t.Errorf("sim --compare-fixed: exit %d, sweep %v, best fixed %v\n%s", code, settings, bestFixed, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--concurrency", "0"}, 2, "concurrency must be at least 1"},
		{[]string{"--mode", "fast"}, 2, "mode must be SINGLE or PARALLEL"},
		{[]string{"--arrival", "bursty"}, 2, "arrivals must be saturated, poisson or scheduled"},
		{[]string{"--state", "paused", "--prs", "5"}, 1, "5 of 5 PRs still in the queue"},
		{[]string{"--commands=off"}, 2, "not simulated: the simulation submits its pull requests through the API"},
		{[]string{"--comments"}, 2, "not simulated: the simulation writes no pull request comments"},
	} {
		_, errOut, code := mg(t, nil, append([]string{"sim"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("sim %v: exit %d, stderr %q; want exit %d saying %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// TestSimHelp: every flag of `mainguard sim` is in its help, saying what it
// does and its default.
func TestSimHelp(t *testing.T) {
	t.Parallel()
	out, _, code := mg(t, nil, "sim", "--help")
	if code != 0 {
		t.Fatalf("sim --help: exit %d", code)
	}
	// A flag's entry is its line and the usage lines under it.
	entries := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+).*\n((?:    .*\n?)*)`).FindAllStringSubmatch(out, -1) {
		entries[m[1]] = m[2]
	}
	for _, name := range []string{
		"mode", "concurrency", "testing-timeout-minutes", "optimistic-merge", "pending-failure-depth", "batch",
		"batching-min-size", "batching-max-wait-minutes", "bisection-concurrency", "optimization-mode",
		"direct-merge-mode", "merge-method", "required-statuses", "state", "create-prs-for-testing-branches",
		"comments", "commands", "status-check", "flaky-retries", "flaky-retry-policy", "flaky-evidence-wait-seconds",
		"prs", "p", "f", "unknown-flaky", "upload-delay", "test-time", "spread", "arrival", "rate", "targets", "seed", "sweep",
		"p-schedule", "arrivals", "lognormal", "autopilot", "autopilot-max-concurrency", "autopilot-max-batch",
		"autopilot-max-ci-runs-per-merge", "compare-fixed", "from-history",
	} {
		usage, ok := entries[name]
		if !ok {
			t.Errorf("sim --help does not list -%s", name)
			continue
		}
		if len(strings.TrimSpace(usage)) < 20 || !strings.Contains(usage, "(default") {
			t.Errorf("-%s: the help should say what it does and its default: %q", name, usage)
		}
		delete(entries, name)
	}
	for name := range entries {
		t.Errorf("-%s is not checked here", name)
	}
	// Comment commands work (docs/api.md 6.1): the help does not say
	// they do nothing, as it did before they did.
	if strings.Contains(out, "does nothing") {
		t.Errorf("sim --help says a setting does nothing:\n%s", out)
	}
}

// TestSimHealth: `mainguard sim health` replays a short history through the
// classifier and prints its table; a setting the classifier refuses is a
// command-line mistake.
func TestSimHealth(t *testing.T) {
	t.Parallel()
	out, errOut, code := mg(t, nil, "sim", "health", "--healthy", "30", "--flaky", "30", "--regressions", "1", "--fixes", "2",
		"--commits", "12", "--days", "3", "--job-size", "20", "--rates", "0:0.01,1:0.3", "--seed", "4")
	if code != 0 || errOut != "" {
		t.Fatalf("sim health: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"60 tests: 29 healthy, 30 flaky (rates 0:0.01,1:0.3), 1 regressions (fixed 6 commits later), 2 flaky tests fixed mid-history",
		"12 commits of main over 3 days", "seed 4", "\nrecall at the end, every flaky test that failed ", "\nhealthy tests ever flagged ",
		"\nregressions listed broken within 3 commits ", "\nstatus changes per flaky test ", "\nfixed tests healthy again ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not show %q:\n%s", want, out)
		}
	}
	for args, want := range map[string]string{
		"--streak 0":         "streak must be between 1 and 1000",
		"--rates 0:0.1":      "give the rates at share 0 and at share 1",
		"--commits 2":        "at least 3 commits of main",
		"--recovery-days 9x": `invalid value "9x" for flag -recovery-days`,
	} {
		_, errOut, code := mg(t, nil, append([]string{"sim", "health"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("sim health %s: exit %d, stderr %q; want 2 and %q", args, code, errOut, want)
		}
	}
}
