package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/app"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/flakyapi"
	"github.com/mainguard/mainguard/shared/health"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// openStore opens the table the environment names, creating it when it is a
// DynamoDB Local one that does not exist yet (deployed, CloudFormation owns it).
func openStore(ctx context.Context, getenv func(string) string) (*store.Store, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	db, err := app.DynamoClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DynamoEndpoint != "" {
		if _, err := store.EnsureTable(ctx, db, cfg.TableName); err != nil {
			return nil, err
		}
	}
	return store.New(db, cfg.TableName, nil), nil
}

func admin(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) < 2 {
		return usageError(fmt.Sprintf("%s needs a subcommand; see `mainguard help`", args[0]))
	}
	cmd := args[0] + " " + args[1]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	org := fs.String("org", "local", "organization slug")
	slug := fs.String("slug", "", "organization slug")
	name := fs.String("name", "", "display name")
	token := fs.String("token", "", "token id (tok_…) or the token itself (mg_…)")
	jira := fs.String("jira-base-url", "", "Jira base URL, e.g. https://acme.atlassian.net")
	linear := fs.String("linear-workspace", "", "Linear workspace slug")
	branch := fs.String("default-branch", "", "default branch (main unless set)")
	var health store.HealthSettings
	onOff := map[string]**bool{
		"quarantine": &health.QuarantineEnabled, "auto-quarantine": &health.AutoQuarantine,
		"pass-on-retry": &health.PassOnRetry, "failure-rate": &health.FailureRate,
		"infra-guard": &health.InfraGuard, "broken-streak": &health.BrokenStreak,
	}
	for name, p := range onOff {
		fs.Func(name, "on or off", func(v string) error {
			switch strings.ToLower(v) {
			case "on", "true":
				*p = ptr(true)
			case "off", "false":
				*p = ptr(false)
			default:
				return fmt.Errorf("must be on or off, got %q", v)
			}
			return nil
		})
	}
	ints := map[string]**int{
		"recovery-days": &health.RecoveryDays, "window-hours": &health.WindowHours, "min-runs": &health.MinRuns,
		"stale-hours": &health.StaleHours, "streak": &health.Streak,
	}
	for name, p := range ints {
		fs.Func(name, "a whole number", func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("must be a whole number, got %q", v)
			}
			*p = ptr(n)
			return nil
		})
	}
	floats := map[string]**float64{
		"flaky-threshold": &health.FlakyThreshold, "broken-threshold": &health.BrokenThreshold,
		"flaky-resolution": &health.FlakyResolution, "broken-resolution": &health.BrokenResolution,
	}
	for name, p := range floats {
		fs.Func(name, "a number from 0 to 1", func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("must be a number, got %q", v)
			}
			*p = ptr(f)
			return nil
		})
	}
	fs.Func("branches", "branch globs, comma-separated", func(v string) error {
		health.Branches = nil
		for _, g := range strings.Split(v, ",") {
			if g = strings.TrimSpace(g); g != "" {
				health.Branches = append(health.Branches, g)
			}
		}
		return nil
	})
	always := fs.Bool("always", false, "always quarantine")
	never := fs.Bool("never", false, "never quarantine")
	unset := fs.Bool("unset", false, "back to the repository's rule")
	reason := fs.String("reason", "", "why, for the event")
	rest := args[2:]
	var positional []string
	// Flags may follow a positional argument (repo set HOST/OWNER/NAME --…).
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return usageError(fmt.Sprintf("%s: %v", cmd, err))
		}
		rest = fs.Args()
		if len(rest) > 0 {
			positional = append(positional, rest[0])
			rest = rest[1:]
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	s, err := openStore(ctx, getenv)
	if err != nil {
		return err
	}
	switch cmd {
	case "org create":
		if *slug == "" {
			return usageError("org create needs --slug")
		}
		o, err := s.CreateOrg(ctx, *slug, *name)
		if err != nil {
			return clientError(err)
		}
		secret, tok, err := s.CreateToken(ctx, o.Slug)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "organization %s created\ntoken %s (shown once, keep it secret):\n%s\n", o.Slug, tok.ID, secret)
	case "token create":
		secret, tok, err := s.CreateToken(ctx, *org)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "token %s for %s (shown once, keep it secret):\n%s\n", tok.ID, *org, secret)
	case "token list":
		toks, err := s.ListTokens(ctx, *org)
		if err != nil {
			return clientError(err)
		}
		for _, t := range toks {
			state := "active"
			if t.Revoked() {
				state = "revoked " + t.RevokedAt.Format("2006-01-02T15:04:05Z")
			}
			fmt.Fprintf(stdout, "%s\tcreated %s\t%s\n", t.ID, t.CreatedAt.Format("2006-01-02T15:04:05Z"), state)
		}
	case "token revoke":
		if *token == "" {
			return usageError("token revoke needs --token ID|SECRET")
		}
		t, err := s.RevokeToken(ctx, *org, *token)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "token %s of %s revoked\n", t.ID, *org)
	case "repo set":
		if len(positional) != 1 {
			return usageError("repo set needs one HOST/OWNER/NAME")
		}
		ref, err := store.ParseRepo(positional[0])
		if err != nil {
			return clientError(err)
		}
		if set["jira-base-url"] && set["linear-workspace"] {
			return usageError("a repository links tickets to one tracker: give --jira-base-url or --linear-workspace, not both")
		}
		var settings store.RepoSettings
		empty := ""
		if set["jira-base-url"] {
			if *jira != "" && !strings.HasPrefix(*jira, "https://") && !strings.HasPrefix(*jira, "http://") {
				return usageError("--jira-base-url must be an http(s) address")
			}
			settings.JiraBaseURL, settings.LinearWorkspace = jira, &empty
		}
		if set["linear-workspace"] {
			settings.LinearWorkspace, settings.JiraBaseURL = linear, &empty
		}
		if set["default-branch"] {
			settings.DefaultBranch = branch
		}
		settings.Health = health
		// Check the settings as they will be, this change on top of what is
		// stored, before writing anything.
		current, err := s.GetRepo(ctx, *org, ref)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return clientError(err)
		}
		if err := testhealth.SettingsOf(merged(current, settings)).Validate(); err != nil {
			return usageError(errs.MessageOf(err))
		}
		r, err := s.UpdateRepo(ctx, *org, ref, settings)
		if err != nil {
			return clientError(err)
		}
		tracker := "none"
		switch {
		case r.JiraBaseURL != "":
			tracker = "jira " + r.JiraBaseURL
		case r.LinearWorkspace != "":
			tracker = "linear " + r.LinearWorkspace
		}
		hs := testhealth.SettingsOf(r)
		fmt.Fprintf(stdout, "repository %s of %s: default branch %s, tracker %s\n", r.Ref, *org, r.Branch(), tracker)
		fmt.Fprintf(stdout, "quarantine %s (auto %s); pass-on-retry %s (%d days); failure-rate %s (%d h on %s, ≥%d runs, flaky ≥%g, broken ≥%g); infra-guard %s; broken-streak %s (%d)\n",
			onoff(hs.QuarantineEnabled), onoff(hs.AutoQuarantine), onoff(hs.PassOnRetry), hs.RecoveryDays,
			onoff(hs.FailureRate), hs.WindowHours, strings.Join(hs.Branches, ","), hs.MinRuns, hs.FlakyThreshold, hs.BrokenThreshold,
			onoff(hs.InfraGuard), onoff(hs.BrokenStreak), hs.Streak)
	case "test quarantine":
		if len(positional) != 2 {
			return usageError("test quarantine needs HOST/OWNER/NAME and a test id")
		}
		ref, err := store.ParseRepo(positional[0])
		if err != nil {
			return clientError(err)
		}
		override := ""
		switch {
		case *always && !*never && !*unset:
			override = store.AlwaysQuarantine
		case *never && !*always && !*unset:
			override = store.NeverQuarantine
		case *unset && !*always && !*never:
		default:
			return usageError("test quarantine needs exactly one of --always, --never, --unset")
		}
		svc, err := healthService(s, getenv)
		if err != nil {
			return err
		}
		tc, err := svc.SetOverride(ctx, *org, ref, strings.ToLower(positional[1]), override,
			flakyapi.Actor{FullName: "mainguard admin", Email: ""}, *reason)
		if err != nil {
			return clientError(err)
		}
		fmt.Fprintf(stdout, "test %s (%s): quarantine override %s, status %s\n", tc.ID, tc.Name, flakyapi.OverrideName(tc.QuarantineOverride), tc.Status.Value)
	case "uploads list":
		ups, err := s.ListUploads(ctx, *org, 50)
		if err != nil {
			return clientError(err)
		}
		for _, u := range ups {
			line := fmt.Sprintf("%s\t%s\t%s\t%s", u.ID, u.CreatedAt.Format("2006-01-02T15:04:05Z"), u.Repo, u.State)
			switch u.State {
			case store.UploadIngested:
				line += fmt.Sprintf("\t%d runs (%d passed, %d failed, %d skipped) on %s %.7s", u.Runs, u.Passed, u.Failed, u.Skipped, u.Branch, u.SHA)
			case store.UploadFailed:
				line += "\t" + u.Reason
			}
			fmt.Fprintln(stdout, line)
		}
	default:
		return usageError(fmt.Sprintf("unknown command %q; see `mainguard help`", cmd))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func onoff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// merged is r with the settings of a change applied, to validate them
// together.
func merged(r store.Repo, set store.RepoSettings) store.Repo {
	if set.DefaultBranch != nil {
		r.DefaultBranch = *set.DefaultBranch
	}
	h, n := &r.HealthSettings, set.Health
	pick := func(dst **bool, src *bool) {
		if src != nil {
			*dst = src
		}
	}
	pickInt := func(dst **int, src *int) {
		if src != nil {
			*dst = src
		}
	}
	pickF := func(dst **float64, src *float64) {
		if src != nil {
			*dst = src
		}
	}
	pick(&h.QuarantineEnabled, n.QuarantineEnabled)
	pick(&h.AutoQuarantine, n.AutoQuarantine)
	pick(&h.PassOnRetry, n.PassOnRetry)
	pick(&h.FailureRate, n.FailureRate)
	pick(&h.InfraGuard, n.InfraGuard)
	pick(&h.BrokenStreak, n.BrokenStreak)
	pickInt(&h.RecoveryDays, n.RecoveryDays)
	pickInt(&h.WindowHours, n.WindowHours)
	pickInt(&h.MinRuns, n.MinRuns)
	pickInt(&h.StaleHours, n.StaleHours)
	pickInt(&h.Streak, n.Streak)
	pickF(&h.FlakyThreshold, n.FlakyThreshold)
	pickF(&h.BrokenThreshold, n.BrokenThreshold)
	pickF(&h.FlakyResolution, n.FlakyResolution)
	pickF(&h.BrokenResolution, n.BrokenResolution)
	if n.Branches != nil {
		h.Branches = n.Branches
	}
	return r
}

// healthService is what changes test health from the command line.
func healthService(s *store.Store, getenv func(string) string) (*health.Service, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return &health.Service{
		Store: s, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		NewID:  app.NewEventID,
		Viewer: flakyapi.Viewer{PublicAppURL: cfg.PublicAppURL},
	}, nil
}

// clientError keeps a domain error's message and drops SDK detail unless
// the error is unexpected.
func clientError(err error) error {
	if msg := errs.MessageOf(err); msg != "" && errs.CodeOf(err) != errs.Internal {
		return fmt.Errorf("%s", msg)
	}
	return err
}
