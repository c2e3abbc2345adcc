package main

import (
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/testhealth/healthsim"
)

// simHealth is `mainguard sim health`: the real classifier replaying a
// generated CI history, on a virtual clock. It needs no server and no
// table.
func simHealth(e *env, args []string) error {
	f := newFlags(cmdOf("sim health"))
	cfg := healthsim.Default()
	f.IntVar(&cfg.Healthy, "healthy", cfg.Healthy, "tests that never fail on their own")
	f.IntVar(&cfg.Flaky, "flaky", cfg.Flaky, "flaky tests, each failing a run with a rate drawn from --rates")
	f.Func("rates", "the flaky tests' failure rates, as share:rate points of their distribution, interpolated in the rate's logarithm (default "+cfg.Rates.String()+": like a published rerun study's)", func(v string) error {
		d, err := healthsim.ParseDistribution(v)
		if err != nil {
			return usageError(errs.MessageOf(err))
		}
		cfg.Rates = d
		return nil
	})
	f.IntVar(&cfg.Regressions, "regressions", cfg.Regressions, "healthy tests a commit of main breaks (every run fails)")
	f.IntVar(&cfg.RegressionCommits, "regression-commits", cfg.RegressionCommits, "commits of main after which a regression is fixed (0: never)")
	f.IntVar(&cfg.Fixes, "fixes", cfg.Fixes, "flaky tests (failing 2% of runs or more) fixed by a commit in the middle third of the history")
	f.IntVar(&cfg.Commits, "commits", cfg.Commits, "commits of main")
	f.IntVar(&cfg.Days, "days", cfg.Days, "days the commits are spread over")
	f.IntVar(&cfg.PRRuns, "pr-runs", cfg.PRRuns, "CI runs of each commit's pull-request branch before it merges")
	f.IntVar(&cfg.JobSize, "job-size", cfg.JobSize, "tests per CI job, an upload each")
	f.IntVar(&cfg.Retries, "retries", cfg.Retries, "retries of a failed job on the same commit")
	f.Float64Var(&cfg.InfraRate, "outages", cfg.InfraRate, "probability that an attempt is an infrastructure outage, failing every test of its job")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed: the same seed gives the same figures")
	monitorFlags(f, &cfg.Settings)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	rs, err := healthsim.Run(cfg)
	if err != nil {
		return simError(err)
	}
	return healthsim.WriteTable(e.stdout, cfg, rs...)
}
