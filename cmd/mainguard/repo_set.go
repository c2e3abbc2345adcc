package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// repoSet is `mainguard repo set HOST/OWNER/NAME`.
func repoSet(e *env, args []string) error {
	f := newFlags(cmdOf("repo set"))
	org := f.orgFlag(e)
	jira := f.String("jira-base-url", "", "Jira base URL, e.g. https://acme.atlassian.net (replaces a Linear workspace)")
	linear := f.String("linear-workspace", "", "Linear workspace slug (replaces a Jira base URL)")
	branch := f.String("default-branch", "", "the default branch (main unless set)")
	var h testhealth.HealthSettings
	f.Func("quarantine", "on or off: quarantine tests in this repository", onOff(&h.QuarantineEnabled))
	f.Func("auto-quarantine", "on or off: quarantine unhealthy tests automatically (default on)", onOff(&h.AutoQuarantine))
	monitorFlags(f, &h)
	t := targetFlags(f, e)
	pos, err := f.parse(e, args, 1)
	if err != nil {
		return err
	}
	ref, err := parseRepo(pos[0])
	if err != nil {
		return err
	}
	if f.isSet("jira-base-url") && f.isSet("linear-workspace") {
		return usageError("a repository links tickets to one tracker: give --jira-base-url or --linear-workspace, not both")
	}
	var settings store.RepoSettings
	empty := ""
	if f.isSet("jira-base-url") {
		if *jira != "" && !strings.HasPrefix(*jira, "https://") && !strings.HasPrefix(*jira, "http://") {
			return usageError("--jira-base-url must be an http(s) address")
		}
		settings.JiraBaseURL, settings.LinearWorkspace = jira, &empty
	}
	if f.isSet("linear-workspace") {
		settings.LinearWorkspace, settings.JiraBaseURL = linear, &empty
	}
	if f.isSet("default-branch") {
		settings.DefaultBranch = branch
	}
	settings.Health = h
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	// Check the settings as they will be, this change on top of what is
	// stored, before writing anything.
	current, err := a.Store.GetRepo(e.ctx, *org, ref)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return t.failed(err)
	}
	next := merged(current, settings)
	if err := next.Settings().Validate(); err != nil {
		return usageError(errs.MessageOf(err))
	}
	r, err := a.Store.UpdateRepo(e.ctx, *org, ref, settings)
	if err != nil {
		return t.failed(err)
	}
	tracker := "none"
	switch {
	case r.JiraBaseURL != "":
		tracker = "jira " + r.JiraBaseURL
	case r.LinearWorkspace != "":
		tracker = "linear " + r.LinearWorkspace
	}
	hs := r.Settings()
	fmt.Fprintf(e.stdout, "repository %s of %s: default branch %s, tracker %s\n", r.Ref, *org, r.Branch(), tracker)
	fmt.Fprintf(e.stdout, "quarantine %s (auto %s); pass-on-retry %s (%d days); failure-rate %s (%d h on %s, ≥%d runs, flaky ≥%g, broken ≥%g); infra-guard %s; broken-streak %s (%d)\n",
		onoff(hs.QuarantineEnabled), onoff(hs.AutoQuarantine), onoff(hs.PassOnRetry), hs.RecoveryDays,
		onoff(hs.FailureRate), hs.WindowHours, strings.Join(hs.Branches, ","), hs.MinRuns, hs.FlakyThreshold, hs.BrokenThreshold,
		onoff(hs.InfraGuard), onoff(hs.BrokenStreak), hs.Streak)
	return nil
}

func intFlag(dst **int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("must be a whole number, got %q", v)
		}
		*dst = ptr(n)
		return nil
	}
}

func floatFlag(dst **float64) func(string) error {
	return func(v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("must be a number, got %q", v)
		}
		*dst = ptr(x)
		return nil
	}
}

// merged is r with the settings of a change applied, to validate them
// together.
func merged(r store.Repo, set store.RepoSettings) store.Repo {
	if set.DefaultBranch != nil {
		r.DefaultBranch = *set.DefaultBranch
	}
	r.HealthSettings = r.HealthSettings.With(set.Health)
	return r
}

// monitorFlags are the monitors' settings, named as repo set names them.
func monitorFlags(f *flags, h *testhealth.HealthSettings) {
	f.Func("pass-on-retry", "on or off: a test that failed and passed on one commit is flaky (default on)", onOff(&h.PassOnRetry))
	f.Func("recovery-days", "days after its last failure or pass-on-retry before a flaky test may be healthy again, once it has had the clean runs its failure rate asks (1 to 15, default 7)", intFlag(&h.RecoveryDays))
	f.Func("failure-rate", "on or off: the failure-rate monitor (default on)", onOff(&h.FailureRate))
	f.Func("window-hours", "the failure-rate monitor's window in hours (1 to 168, default 168)", intFlag(&h.WindowHours))
	f.Func("branches", "branch globs the failure-rate monitor watches, comma-separated (default: the default branch)", func(v string) error {
		h.Branches = nil
		for g := range strings.SplitSeq(v, ",") {
			if g = strings.TrimSpace(g); g != "" {
				h.Branches = append(h.Branches, g)
			}
		}
		return nil
	})
	f.Func("min-runs", "runs in the window before the failure-rate monitor judges (default 20)", intFlag(&h.MinRuns))
	f.Func("flaky-threshold", "failure rate from which a test is flaky (default 0.1)", floatFlag(&h.FlakyThreshold))
	f.Func("broken-threshold", "failure rate from which a test is broken (default 0.9)", floatFlag(&h.BrokenThreshold))
	f.Func("flaky-resolution", "failure rate below which a flaky test is healthy again (default: the flaky threshold)", floatFlag(&h.FlakyResolution))
	f.Func("broken-resolution", "failure rate below which a broken test is no longer broken (default: the broken threshold)", floatFlag(&h.BrokenResolution))
	f.Func("stale-hours", "hours without a run after which the failure-rate monitor stops judging (default 168)", intFlag(&h.StaleHours))
	f.Func("infra-guard", "on or off: set aside uploads where over 80% of tests failed (default on)", onOff(&h.InfraGuard))
	f.Func("broken-streak", "on or off: a test whose every attempt failed on --streak commits in a row of the monitored branches is broken (default on)", onOff(&h.BrokenStreak))
	f.Func("streak", fmt.Sprintf("the broken-streak monitor's commit count (1 to 1000, default %d)", testhealth.DefaultStreak), intFlag(&h.Streak))
}
