package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/mergequeue/queuesim"
	"github.com/mainguard/mainguard/shared/repository"
)

// simulate is `mainguard sim`: the merge-queue engine on a simulated GitHub
// and CI, on a virtual clock. It needs no server and no table.
func simulate(e *env, args []string) error {
	f := newFlags(cmdOf("sim"))
	var cfg queuesim.Config
	queueFlags(f, &cfg.Queue)
	arrival := worldFlags(f, &cfg)
	sweep := f.Bool("sweep", false, "print a table over p of 2, 5, 10 and 20% and --concurrency of 1, 5 and 10 instead of one run, every other flag kept (default off)")
	fromHistory := f.String("from-history", "", "replay the queue history this file holds (`mainguard queue history --json`): its arrivals, bad PRs and run times, under the queue's own settings with any queue flag given laid over them; prints the actual figures beside the replay's and a recommendation (default none)")
	compare := f.Bool("compare-fixed", false, "run the world under the autopilot (within its bounds, --autopilot-max-…), under the queue settings given (createQueue's defaults unless set) and under every fixed concurrency and batch size within the bounds, and print them side by side, phase by phase, with the best fixed setting chosen in hindsight (default off)")
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	if f.isSet("arrivals") {
		if f.isSet("arrival") && *arrival != string(queuesim.Scheduled) {
			return usageError("sim: --arrivals schedules the arrivals; leave out --arrival " + *arrival + " (see `mainguard sim --help`)")
		}
		*arrival = string(queuesim.Scheduled)
	}
	cfg.Arrival = queuesim.Arrival(*arrival)
	switch {
	case *fromHistory != "":
		return simReplay(e, *fromHistory, cfg.Queue, cfg.Seed)
	case *sweep:
		return simSweep(e.stdout, cfg)
	case *compare:
		return simCompare(e.stdout, cfg)
	}
	r, err := queuesim.Run(cfg)
	if err != nil {
		return simError(err)
	}
	printSim(e.stdout, cfg, r)
	return nil
}

// queueFlags are the queue settings, named after the API's fields. Unset,
// they keep createQueue's defaults, which the help shows.
func queueFlags(f *flags, p *mergequeue.QueuePatch) {
	def := mergequeue.DefaultQueue(repository.Ref{}, "main")
	f.Func("mode", fmt.Sprintf("SINGLE or PARALLEL: one testing line, or a lane per group of impacted targets (see --targets) (default %s)", def.Mode), textFlag(&p.Mode))
	f.Func("concurrency", fmt.Sprintf("test runs at once, C (default %d)", def.Concurrency), intFlag(&p.Concurrency))
	f.Func("testing-timeout-minutes", fmt.Sprintf("minutes a run may take before it fails (default %d)", def.TestingTimeoutMinutes), intFlag(&p.TestingTimeoutMinutes))
	f.BoolFunc("optimistic-merge", fmt.Sprintf("a failed PR merges when a later run that includes it passes (canOptimisticallyMerge) (default %s)", onoff(def.CanOptimisticallyMerge)), onOff(&p.CanOptimisticallyMerge))
	f.Func("pending-failure-depth", fmt.Sprintf("runs behind a failed PR that must finish before it fails (default %d)", def.PendingFailureDepth), intFlag(&p.PendingFailureDepth))
	f.BoolFunc("batch", fmt.Sprintf("test PRs in batches (default %s)", onoff(def.Batch)), onOff(&p.Batch))
	f.Func("batching-min-size", fmt.Sprintf("PRs a batch waits for (default %d)", def.BatchingMinSize), intFlag(&p.BatchingMinSize))
	f.Func("batching-max-wait-minutes", fmt.Sprintf("minutes a batch waits for its minimum size (default %d)", def.BatchingMaxWaitTimeMinutes), intFlag(&p.BatchingMaxWaitTimeMinutes))
	f.Func("bisection-concurrency", "test runs at once when bisecting a failed batch (default: the concurrency)", intFlag(&p.BisectionConcurrency))
	f.Func("optimization-mode", fmt.Sprintf("OFF or BISECTION_SKIP_REDUNDANT_TESTS (default %s)", def.OptimizationMode), textFlag(&p.OptimizationMode))
	f.Func("direct-merge-mode", fmt.Sprintf("OFF or ALWAYS: with nothing testing, the first waiting PR merges without a test run when it is up to date with the target branch and its own checks passed (default %s)", def.DirectMergeMode), textFlag(&p.DirectMergeMode))
	f.Func("merge-method", fmt.Sprintf("MERGE_COMMIT, SQUASH or REBASE (default %s)", def.MergeMethod), textFlag(&p.MergeMethod))
	f.Func("required-statuses", "the statuses a run must pass, comma-separated; the simulated CI reports them all (default ci)", func(v string) error {
		p.RequiredStatuses = strings.Split(v, ",")
		return nil
	})
	f.Func("state", fmt.Sprintf("RUNNING, PAUSED or DRAINING; a queue that is not running never finishes, which the simulation reports (default %s)", def.State), textFlag(&p.State))
	f.BoolFunc("create-prs-for-testing-branches", fmt.Sprintf("open a PR for each test branch; refused for now: nothing opens them yet (default %s)", onoff(def.CreatePrsForTestingBranches)), onOff(&p.CreatePrsForTestingBranches))
	// The queue's PR comment and its comment commands work on GitHub (and
	// the simulated GitHub of `serve`); this simulation has neither, so
	// their settings would change nothing here, and are refused.
	f.BoolFunc("comments", fmt.Sprintf("commentsEnabled, the queue's one comment on each pull request: refused here, the simulation writes no comments, which change nothing it measures (default %s in a queue)", onoff(def.CommentsEnabled)),
		refused("the simulation writes no pull request comments (they change nothing it measures)"))
	f.BoolFunc("commands", fmt.Sprintf("commandsEnabled, /mainguard comment commands: refused here, the simulation submits its pull requests through the API, never by a comment (default %s in a queue)", onoff(def.CommandsEnabled)),
		refused("the simulation submits its pull requests through the API, never by a comment command"))
	f.BoolFunc("status-check", fmt.Sprintf("set a commit status on each PR head; --status-check=off to turn off (default %s)", onoff(def.StatusCheckEnabled)), onOff(&p.StatusCheckEnabled))
	f.Func("flaky-retries", fmt.Sprintf("times a PR's failed run may be retried, 0 to 3 (default %d)", def.FlakyRetries), intFlag(&p.FlakyRetries))
	f.Func("flaky-retry-policy", fmt.Sprintf("KNOWN_FLAKY (retry a run when every test that failed is one test health knows as flaky, see --unknown-flaky) or ANY_FAILURE (default %s)", def.FlakyRetryPolicy), textFlag(&p.FlakyRetryPolicy))
	f.Func("flaky-evidence-wait-seconds", fmt.Sprintf("seconds a failed run waits for its test results before it fails (see --upload-delay) (default %d)", def.FlakyEvidenceWaitSeconds), intFlag(&p.FlakyEvidenceWaitSeconds))
	f.BoolFunc("autopilot", fmt.Sprintf("the queue chooses its concurrency and batch size itself, within the bounds below (default %s)", onoff(def.Autopilot)), onOff(&p.Autopilot))
	f.Func("autopilot-max-concurrency", fmt.Sprintf("the most test runs at once the autopilot chooses, 1 to %d (default %d)", mergequeue.MaxAutopilotConcurrency, def.AutopilotMaxConcurrency), intFlag(&p.AutopilotMaxConcurrency))
	f.Func("autopilot-max-batch", fmt.Sprintf("the largest batch the autopilot chooses, 1 (never batch) to %d (default %d)", mergequeue.MaxAutopilotBatch, def.AutopilotMaxBatch), intFlag(&p.AutopilotMaxBatch))
	f.Func("autopilot-max-ci-runs-per-merge", fmt.Sprintf("the most CI runs per merged PR the autopilot's model may expect of its choice (default %g)", def.AutopilotMaxCiRunsPerMerge), floatFlag(&p.AutopilotMaxCiRunsPerMerge))
}

// worldFlags are the simulated world's settings; it returns --arrival.
func worldFlags(f *flags, cfg *queuesim.Config) *string {
	f.IntVar(&cfg.PRs, "prs", 2000, "pull requests to submit, N")
	f.Float64Var(&cfg.BadRate, "p", 0.05, "probability that a PR is bad: every run with it among its heads fails (exactly round(p·N) PRs are bad)")
	f.Func("p-schedule", `p moving with the PRs, replacing --p: "0.02@0,0.12@600,0.04@1200" is 2% for PRs 0 to 599, 12% for 600 to 1199, then 4%; each step is a phase, reported on its own (default none)`, scheduleFlag(&cfg.BadSchedule))
	f.Float64Var(&cfg.FlakeRate, "f", 0, "probability that a run of good PRs fails anyway: that one of the flaky tests, each flaking in 1 to 10% of runs, fails in it (default 0)")
	f.Float64Var(&cfg.UnknownFlaky, "unknown-flaky", 0, "share of the flaky tests test health holds healthy, not flaky: KNOWN_FLAKY does not retry their failures (default 0: it knows them all)")
	f.DurationVar(&cfg.UploadDelay, "upload-delay", 0, "how long after its checks a run's test results reach test health (default 0: at once)")
	f.DurationVar(&cfg.TestTime, "test-time", 30*time.Minute, "how long a CI run takes, T")
	f.Float64Var(&cfg.Spread, "spread", 0, "s: a run takes a time uniform in T·[1−s, 1+s] (default 0: exactly T)")
	f.Float64Var(&cfg.LogNormal, "lognormal", 0, "σ: a run takes a log-normal time of median T, ln of it normal with standard deviation σ; instead of --spread (default 0: off)")
	arrival := f.String("arrival", string(queuesim.Saturated), "saturated (the queue always holds at least max(2·C·B, 8) untested PRs) or poisson (--rate PRs per test time)")
	f.Func("arrivals", `Poisson arrivals whose rate in PRs per hour moves with the PRs: "8@0,60@300,8@400" is 8 an hour, a burst of 100 PRs at 60 an hour, then 8 an hour again (default none)`, scheduleFlag(&cfg.RateSchedule))
	f.Float64Var(&cfg.Rate, "rate", 1, "with --arrival poisson: PRs arriving per test time, on average")
	f.IntVar(&cfg.Targets, "targets", 0, "independent impacted-target groups K, each PR in one at random; PARALLEL mode makes a lane of each (default 0: every PR impacts ALL, one lane)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed: the same seed gives the same figures")
	return arrival
}

// refused is a flag.Func for a setting that would do nothing in the
// simulation: it refuses any value, saying why.
func refused(why string) func(string) error {
	return func(string) error { return errors.New("not simulated: " + why) }
}

// scheduleFlag is a flag.Func reading a schedule (sim.ParseSchedule).
func scheduleFlag(dst *queuesim.Schedule) func(string) error {
	return func(v string) error {
		s, err := queuesim.ParseSchedule(v)
		if err != nil {
			return err
		}
		*dst = s
		return nil
	}
}

// textFlag is a flag.Func reading a string into *dst.
func textFlag(dst **string) func(string) error {
	return func(v string) error {
		*dst = ptr(v)
		return nil
	}
}

// simError makes a setting the engine or the world refuses a mistake in
// the command line.
func simError(err error) error {
	if errs.Is(err, errs.Invalid) {
		return usageError(fmt.Sprintf("sim: %s (see `mainguard sim --help`)", errs.MessageOf(err)))
	}
	return err
}

// printSim prints the figures of one simulation.
func printSim(w io.Writer, cfg queuesim.Config, r queuesim.Result) {
	q := r.Queue
	size := fmt.Sprintf("concurrency %d", q.Concurrency)
	if q.Autopilot {
		// The autopilot changes these as it goes (its changes are listed
		// below): say where it starts and how far it may go.
		size = fmt.Sprintf("concurrency %d at the start, the autopilot choosing up to %d and batches up to %d", q.Concurrency, q.AutopilotMaxConcurrency, q.AutopilotMaxBatch)
	}
	fmt.Fprintf(w, "%d PRs (%d bad) through a %s queue of %s; T = %v, spread %g, flakes %g, %s arrivals, seed %d\n\n",
		r.PRs, r.Bad, q.Mode, size, cfg.TestTime, cfg.Spread, cfg.FlakeRate, cfg.Arrival, cfg.Seed)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{name}, args...)...)
	}
	row("merged", "%d", r.Merged)
	row("good PRs failed (wrongly ejected)", "%d", r.Failed)
	row("bad PRs failed", "%d of %d", r.BadFailed, r.Bad)
	row("bad PRs merged", "%d", r.BadMerged)
	row("cancelled", "%d", r.Cancelled)
	row("CI runs started", "%d", r.CIRuns)
	row("flaky tests", "%d, %d of them unknown to test health", r.FlakyTests, r.UnknownFlakyTests)
	row("flaky retries", "%d (%s, at most %d per PR)", r.Retries, q.FlakyRetryPolicy, q.FlakyRetries)
	row("virtual time", "%v from the first submit to the last conclusion", r.Elapsed.Round(time.Second))
	if r.HasBound {
		row("merges per T", "%.3f\tbound %.3f, ratio %.3f (over %v, %d merges)", r.MergesPerT, r.Bound, r.MergesPerT/r.Bound, r.Window.Round(time.Minute), r.WindowMerges)
	} else {
		row("merges per T", "%.3f\tno bound: the model needs no batching, --spread 0, saturated arrivals, no optimistic merge of flakes, and no flaky retries (over %v, %d merges)", r.MergesPerT, r.Window.Round(time.Minute), r.WindowMerges)
	}
	if r.LanesBound > 0 {
		row(fmt.Sprintf("%d evenly loaded lanes", cfg.Targets), "%.3f\tfor information: the most %d lanes could merge per T", r.LanesBound, cfg.Targets)
	}
	row("merges per hour", "%.2f\tfrom the first submit to the last merge", r.MergesPerHour)
	row("CI runs per merged PR", "%.2f", r.RunsPerMerge)
	row("time in queue of merged PRs", "mean %v, p50 %v, p90 %v, p95 %v", r.MeanInQueue.Round(time.Second), r.P50.Round(time.Second), r.P90.Round(time.Second), r.P95InQueue.Round(time.Second))
	if r.HasBound {
		row("wrongly ejected per 100 merges", "%.2f\tmodel %.2f", r.EjectedPer100, r.ModelEjectedPer100)
	} else {
		row("wrongly ejected per 100 merges", "%.2f", r.EjectedPer100)
	}
	var events []string
	for _, t := range slices.Sorted(maps.Keys(r.Events)) {
		events = append(events, fmt.Sprintf("%s %d", t, r.Events[t]))
	}
	row("events", "%s", strings.Join(events, ", "))
	row("commit statuses set", "%d", r.Statuses)
	row("engine steps", "%d, and %d probes of quiet ticks", r.Steps, r.Probes)
	_ = tw.Flush()
	if len(r.Phases) > 1 {
		fmt.Fprintln(w, "\nphases:")
		printPhases(w, []string{"this run"}, []queuesim.Result{r})
	}
	if len(r.Autopilot) > 0 {
		fmt.Fprintf(w, "\nautopilot: %d changes\n", len(r.Autopilot))
		for _, c := range r.Autopilot {
			fmt.Fprintf(w, "  %v  %s\n", c.At.Sub(r.Start).Round(time.Minute), c.Line)
		}
	}
}

// printPhases writes each phase of the results named, a line per result.
func printPhases(w io.Writer, names []string, rs []queuesim.Result) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tPRs\tp\tsetting\tmerged\tmerges/h\tp50\tp90\tCI runs/merge\twrongly ejected\tbad merged\t")
	for i, ph := range rs[0].Phases {
		for k, r := range rs {
			p := r.Phases[i]
			fmt.Fprintf(tw, "%d\t%d-%d\t%g%%\t%s\t%d\t%.2f\t%v\t%v\t%.2f\t%d\t%d\t\n", i+1, ph.From, ph.To-1, 100*ph.BadRate, names[k],
				p.Merged, p.MergesPerHour, p.P50.Round(time.Minute), p.P90.Round(time.Minute), p.RunsPerMerge, p.Failed, p.BadMerged)
		}
	}
	_ = tw.Flush()
}

// simCompare runs the world under the autopilot, the queue's own settings
// and every fixed setting within the autopilot's bounds, and prints them
// with the best fixed setting of each phase (sim.CompareFixed).
func simCompare(w io.Writer, base queuesim.Config) error {
	q := mergequeue.DefaultQueue(repository.Ref{}, "main")
	if base.Queue.AutopilotMaxConcurrency != nil {
		q.AutopilotMaxConcurrency = *base.Queue.AutopilotMaxConcurrency
	}
	if base.Queue.AutopilotMaxBatch != nil {
		q.AutopilotMaxBatch = *base.Queue.AutopilotMaxBatch
	}
	cs, bs := queuesim.Grid(q.AutopilotMaxConcurrency, q.AutopilotMaxBatch)
	h, err := queuesim.CompareFixed(base, cs, bs)
	if err != nil {
		return simError(err)
	}
	printHindsight(w, base, h)
	return nil
}

// printHindsight writes a comparison: the whole run, then phase by phase,
// the autopilot beside the default and the best fixed settings, then the
// whole sweep that found them.
func printHindsight(w io.Writer, base queuesim.Config, h queuesim.Hindsight) {
	fixedName := func(f queuesim.Fixed) string {
		return fmt.Sprintf("C=%d B=%d", f.Concurrency, f.Batch)
	}
	fmt.Fprintf(w, "%d PRs; T = %v (log-normal σ %g, spread %g), flakes %g, %s arrivals, seed %d\n\n",
		base.PRs, base.TestTime, base.LogNormal, base.Spread, base.FlakeRate, base.Arrival, base.Seed)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "whole run\tmerges/h\tp50\tp90\tCI runs/merge\twrongly ejected\tbad merged\t")
	whole := func(name string, r queuesim.Result) {
		fmt.Fprintf(tw, "%s\t%.2f\t%v\t%v\t%.2f\t%d\t%d\t\n", name, r.MergesPerHour, r.P50.Round(time.Minute), r.P90.Round(time.Minute), r.RunsPerMerge, r.Failed, r.BadMerged)
	}
	whole("autopilot", h.Autopilot)
	whole("default", h.Default)
	bestAll := h.Fixed[h.BestOverall]
	whole("best fixed "+fixedName(bestAll), bestAll.Result)
	_ = tw.Flush()
	fmt.Fprintf(w, "\nautopilot: ×%.2f the default's merges per hour, ×%.2f the best fixed setting's\n\n",
		h.Autopilot.MergesPerHour/h.Default.MergesPerHour, h.Autopilot.MergesPerHour/bestAll.Result.MergesPerHour)
	names := []string{"autopilot", "default"}
	rs := []queuesim.Result{h.Autopilot, h.Default}
	for p, i := range h.Best {
		names, rs = append(names, fmt.Sprintf("best of phase %d: %s", p+1, fixedName(h.Fixed[i]))), append(rs, h.Fixed[i].Result)
	}
	printPhases(w, names, rs)
	fmt.Fprintln(w, "\nthe sweep of fixed settings (merges per hour, CI runs per merge; whole run, then each phase):")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	head := "setting\twhole\t"
	for p := range h.Best {
		head += fmt.Sprintf("phase %d\t", p+1)
	}
	fmt.Fprintln(tw, head)
	for _, f := range h.Fixed {
		line := fmt.Sprintf("%s\t%.2f, %.2f\t", fixedName(f), f.Result.MergesPerHour, f.Result.RunsPerMerge)
		for _, ph := range f.Result.Phases {
			line += fmt.Sprintf("%.2f, %.2f\t", ph.MergesPerHour, ph.RunsPerMerge)
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
	if len(h.Autopilot.Autopilot) > 0 {
		fmt.Fprintf(w, "\nautopilot: %d changes\n", len(h.Autopilot.Autopilot))
		for _, c := range h.Autopilot.Autopilot {
			fmt.Fprintf(w, "  %v  %s\n", c.At.Sub(h.Autopilot.Start).Round(time.Minute), c.Line)
		}
	}
}

// simSweep runs base over the grid, the points at once, and prints a
// table.
func simSweep(w io.Writer, base queuesim.Config) error {
	points := queuesim.Sweep(base)
	results := make([]queuesim.Result, len(points))
	failures := make([]error, len(points))
	var wg sync.WaitGroup
	for i, cfg := range points {
		wg.Go(func() { results[i], failures[i] = queuesim.Run(cfg) })
	}
	wg.Wait()
	for _, err := range failures {
		if err != nil {
			return simError(err) // every point has the same settings but two: the first says it
		}
	}
	fmt.Fprintf(w, "%d PRs per point; T = %v, spread %g, flakes %g, %s arrivals, seed %d\n\n",
		base.PRs, base.TestTime, base.Spread, base.FlakeRate, base.Arrival, base.Seed)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tC\tmerges/T\tbound\tratio\tCI runs/merge\twrongly ejected/100\t")
	for i, r := range results {
		bound, ratio := "-", "-"
		if r.HasBound {
			bound, ratio = fmt.Sprintf("%.3f", r.Bound), fmt.Sprintf("%.3f", r.MergesPerT/r.Bound)
		}
		fmt.Fprintf(tw, "%g%%\t%d\t%.3f\t%s\t%s\t%.2f\t%.2f\t\n",
			100*points[i].BadRate, r.Queue.Concurrency, r.MergesPerT, bound, ratio, r.RunsPerMerge, r.EjectedPer100)
	}
	return tw.Flush()
}
