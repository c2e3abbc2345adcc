package main

import (
	"fmt"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// uploadsList is `mainguard uploads list`.
func uploadsList(e *env, args []string) error {
	f := newFlags(cmdOf("uploads list"))
	org := f.orgFlag(e)
	limit := f.Int("limit", 50, "how many uploads to show, most recent first (1 to 1000)")
	t := targetFlags(f, e)
	if _, err := f.parse(e, args, 0); err != nil {
		return err
	}
	if *limit < 1 || *limit > 1000 {
		return usageError("uploads list: --limit must be from 1 to 1000")
	}
	a, err := t.openOrg(e, *org)
	if err != nil {
		return err
	}
	ups, err := a.Store.ListUploads(e.ctx, *org, int32(*limit))
	if err != nil {
		return t.failed(err)
	}
	for _, u := range ups {
		line := fmt.Sprintf("%s\t%s\t%s\t%s", u.ID, u.CreatedAt.Format("2006-01-02T15:04:05Z"), u.Repo, u.State)
		switch u.State {
		case store.UploadIngested:
			line += fmt.Sprintf("\t%d runs (%d passed, %d failed, %d skipped) on %s %.7s", u.Runs, u.Passed, u.Failed, u.Skipped, u.Branch, u.SHA)
			if u.Guarded {
				line += fmt.Sprintf("; set aside by the infrastructure guard: %d of %d test cases failed (more than %d%%), so its failures count in the rates but not for flaky or broken",
					u.GuardFailed, u.GuardCases, int(testhealth.InfraGuardShare*100))
			}
		case store.UploadFailed, store.UploadExpired:
			line += "\t" + u.Reason
		}
		fmt.Fprintln(e.stdout, line)
	}
	return nil
}
