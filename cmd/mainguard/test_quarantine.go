package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// testQuarantine is `mainguard test quarantine HOST/OWNER/NAME TEST_ID`.
func testQuarantine(e *env, args []string) error {
	f := newFlags(cmdOf("test quarantine"))
	org := f.orgFlag(e)
	always := f.Bool("always", false, "always quarantine the test")
	never := f.Bool("never", false, "never quarantine the test")
	unset := f.Bool("unset", false, "back to the repository's rule")
	untilFlag := f.String("until", "", "with --always or --never: the override applies through this day (2027-01-31, UTC) or up to this RFC 3339 time, then the repository's rule again (default: no end)")
	reason := f.String("reason", "", "why, for the event")
	t := targetFlags(f, e)
	pos, err := f.parse(e, args, 2)
	if err != nil {
		return err
	}
	ref, err := parseRepo(pos[0])
	if err != nil {
		return err
	}
	override := ""
	switch {
	case *always && !*never && !*unset:
		override = testhealth.AlwaysQuarantine
	case *never && !*always && !*unset:
		override = testhealth.NeverQuarantine
	case *unset && !*always && !*never:
	default:
		return usageError("test quarantine needs exactly one of --always, --never, --unset")
	}
	var until time.Time
	if *untilFlag != "" {
		if override == "" {
			return usageError("test quarantine: --until goes with --always or --never")
		}
		if until, err = testhealth.ParseUntil(*untilFlag); err != nil {
			return usageError("test quarantine: --" + errs.MessageOf(err))
		}
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	tc, err := a.Health.SetOverride(e.ctx, *org, ref, strings.ToLower(pos[1]), override, until,
		healthview.Actor{FullName: "mainguard admin"}, *reason)
	if err != nil {
		return t.failed(err)
	}
	end := ""
	if u := healthview.OverrideUntil(tc); u != "" {
		end = " until " + u + ", then the repository's rule"
	}
	fmt.Fprintf(e.stdout, "test %s (%s): quarantine override %s%s, status %s\n", tc.ID, tc.Name, healthview.OverrideName(tc.QuarantineOverride), end, testhealth.Previous(tc))
	return nil
}
