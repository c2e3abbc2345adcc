package main

import (
	"fmt"
	"strings"

	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// testShow is `mainguard test show HOST/OWNER/NAME TEST_ID`: the test as
// get-test-details answers it, for a person.
func testShow(e *env, args []string) error {
	f := newFlags(cmdOf("test show"))
	org := f.orgFlag(e)
	t := targetFlags(f, e)
	pos, err := f.parse(e, args, 2)
	if err != nil {
		return err
	}
	ref, err := parseRepo(pos[0])
	if err != nil {
		return err
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	r, tc, err := a.Store.ShowTest(e.ctx, *org, ref, strings.ToLower(pos[1]))
	if err != nil {
		return t.failed(err)
	}
	s := r.Settings()
	tc.Quarantined = testhealth.Quarantined(tc, s)
	v := a.Health.Viewer.Full(tc, s, a.Now())
	w := e.stdout
	fmt.Fprintf(w, "%s\n", v.Name)
	fmt.Fprintf(w, "  id           %s\n", v.ID)
	if v.Classname != "" || v.FilePath != "" {
		fmt.Fprintf(w, "  where        %s\n", strings.TrimSpace(v.Classname+" "+v.FilePath))
	}
	if v.Variant != "" {
		fmt.Fprintf(w, "  variant      %s\n", v.Variant)
	}
	fmt.Fprintf(w, "  status       %s since %s\n", v.Status.Value, v.Status.Timestamp)
	fmt.Fprintf(w, "  reason       %s\n", v.Status.Reason)
	fmt.Fprintf(w, "  failure rate %s in 24 h, %s in 7 days\n", percentOf(v.FailureRateLast24h), percentOf(v.FailureRateLast7d))
	fmt.Fprintf(w, "  PRs impacted %d in 7 days\n", v.PullRequestsImpacted)
	override := healthview.OverrideName(tc.QuarantineOverride)
	if until := healthview.OverrideUntil(tc); until != "" {
		override += " until " + until
	}
	fmt.Fprintf(w, "  quarantined  %s (override %s)\n", yesNo(v.Quarantined), override)
	owners := "none"
	if len(v.Codeowners) > 0 {
		owners = strings.Join(v.Codeowners, " ")
	}
	fmt.Fprintf(w, "  owners       %s\n", owners)
	if v.Ticket != nil {
		fmt.Fprintf(w, "  ticket       %s\n", v.Ticket.HTMLURL)
	}
	if v.MostCommonFailures != nil {
		for i, fl := range *v.MostCommonFailures {
			label := ""
			if i == 0 {
				label = "failures"
			}
			fmt.Fprintf(w, "  %-12s %d× %s\n", label, fl.OccurrenceCount, firstLine(fl.Summary))
		}
	}
	if t.appURL == "" {
		// Where the deployment serves its web app, this machine does not
		// know: the page's path, and how to say the address.
		path := healthview.Viewer{}.Brief(tc, s, a.Now()).HTMLURL
		fmt.Fprintf(w, "  page         %s on the deployment's web app (set PUBLIC_APP_URL to its address for a full link)\n", path)
		return nil
	}
	fmt.Fprintf(w, "  page         %s\n", v.HTMLURL)
	return nil
}

func percentOf(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *r*100)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// firstLine is s up to its first line break, for one-line listings.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
