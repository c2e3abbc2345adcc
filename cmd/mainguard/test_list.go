package main

import (
	"fmt"
	"strings"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// testList is `mainguard test list HOST/OWNER/NAME`: the repository's
// unhealthy tests (flaky, then broken), those of one status, or the
// quarantined ones, a table under a header: id, status, quarantined (yes
// or no), name, reason; with --ids the ids alone, one a line.
func testList(e *env, args []string) error {
	f := newFlags(cmdOf("test list"))
	org := f.orgFlag(e)
	status := f.String("status", "", "only tests of this status: flaky or broken (default both)")
	quarantined := f.Bool("quarantined", false, "only the tests that are quarantined now")
	ids := f.Bool("ids", false, "print only the test ids, one a line, for scripts")
	t := targetFlags(f, e)
	pos, err := f.parse(e, args, 1)
	if err != nil {
		return err
	}
	ref, err := parseRepo(pos[0])
	if err != nil {
		return err
	}
	statuses := []string{testhealth.Flaky, testhealth.Broken}
	switch st := strings.ToLower(*status); st {
	case "":
	case testhealth.Flaky, testhealth.Broken:
		statuses = []string{st}
	case testhealth.Healthy:
		// Healthy tests are kept out of every index, so that a passing
		// run never writes one: there is no list of them to read.
		return usageError("test list: healthy tests are not indexed, so they cannot be listed; `mainguard test show` reads any test by its id (`mainguard upload` prints the ids of the tests that failed)")
	default:
		return usageError(fmt.Sprintf("test list: --status must be flaky or broken, got %q", *status))
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	r, err := a.Store.GetRepo(e.ctx, *org, ref)
	if err != nil {
		return t.failed(err)
	}
	s := r.Settings()
	var tests []testhealth.TestCase
	read := func(list func(q store.PageQuery) (store.Page, error)) error {
		q := store.PageQuery{Limit: 100}
		for {
			p, err := list(q)
			if err != nil {
				return t.failed(err)
			}
			tests = append(tests, p.Tests...)
			if p.Next == "" {
				return nil
			}
			q.After = p.Next
		}
	}
	if *quarantined {
		err = read(func(q store.PageQuery) (store.Page, error) {
			return a.Store.ListQuarantineCandidates(e.ctx, *org, ref, !s.AutoQuarantine, q)
		})
	} else {
		for _, st := range statuses {
			if err = read(func(q store.PageQuery) (store.Page, error) {
				return a.Store.ListUnhealthy(e.ctx, *org, ref, st, q)
			}); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	now := a.Now()
	var rows [][]cell
	for _, tc := range tests {
		tc.Quarantined = testhealth.Quarantined(tc, s)
		st := testhealth.Status(tc, s, now)
		if (*quarantined && !tc.Quarantined) || (*status != "" && st.Value != strings.ToLower(*status)) {
			continue
		}
		if *ids {
			fmt.Fprintln(e.stdout, tc.ID)
			continue
		}
		rows = append(rows, cells(tc.ID, st.Value, yesNo(tc.Quarantined), tc.Name, st.Reason))
	}
	switch {
	case len(rows) > 0:
		colorOn(e).printTable(e.stdout, []string{"ID", "STATUS", "QUARANTINED", "NAME", "REASON"}, rows)
	case !*ids:
		fmt.Fprintln(e.stderr, "mainguard: no such tests in", ref)
	}
	return nil
}
