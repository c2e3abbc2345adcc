package queuesvc

import (
	"context"
	"fmt"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Test health's answers for the runs waiting for evidence (anti-flake
// retries): the failed tests of the uploads of each run's head, with their
// status and quarantine now.

// StatusUnknown stands for failed tests an upload did not list (more than
// store.MaxFailedTests failed): they cannot be known flaky.
const StatusUnknown = "unknown"

// evidence looks up the evidence of every run the engine waits on. An
// error means the store failed: the caller does not step on a half-read,
// so no PR is ejected or retried on it. A run without an ingested upload
// that lists failed tests has no evidence yet.
func (d *Service) evidence(ctx context.Context, rec store.QueueRecord) ([]mergequeue.RunEvidence, error) {
	wanted := mergequeue.EvidenceWanted(rec.Snapshot)
	if len(wanted) == 0 {
		return nil, nil
	}
	var settings *testhealth.Settings
	var out []mergequeue.RunEvidence
	for _, r := range wanted {
		ups, err := d.Store.TestBranchUploads(ctx, rec.Key.Org, rec.Key.Repo, r.HeadSHA, r.CreatedAt)
		if err != nil {
			return nil, err
		}
		failed, more := failedTests(ups)
		if len(failed) == 0 && more == 0 {
			continue
		}
		if settings == nil {
			repo, err := d.Store.GetRepo(ctx, rec.Key.Org, rec.Key.Repo)
			if err != nil && !errs.Is(err, errs.NotFound) {
				return nil, err
			}
			s := repo.Settings()
			settings = &s
		}
		ev, err := d.judge(ctx, rec, failed, *settings)
		if err != nil {
			return nil, err
		}
		if more > 0 {
			ev = append(ev, mergequeue.FailedTest{Name: fmt.Sprintf("%d more failed tests", more), Status: StatusUnknown})
		}
		out = append(out, mergequeue.RunEvidence{RunID: r.ID, Failed: ev})
	}
	return out, nil
}

// failedTests merges the failed tests of a run's uploads, in upload order,
// at most store.MaxFailedTests of them (so one BatchGetItem reads them),
// and counts those left out or not listed by the uploads.
func failedTests(ups []store.Upload) (refs []store.FailedTestRef, more int) {
	seen := map[string]bool{}
	for _, u := range ups {
		for _, t := range u.FailedTests {
			switch {
			case seen[t.ID]:
			case len(refs) == store.MaxFailedTests:
				more++
			default:
				seen[t.ID] = true
				refs = append(refs, t)
			}
		}
		more += u.FailedTestsTotal - len(u.FailedTests)
	}
	return refs, more
}

// judge reads the failed tests' status and quarantine as test health holds
// them now.
func (d *Service) judge(ctx context.Context, rec store.QueueRecord, refs []store.FailedTestRef, s testhealth.Settings) ([]mergequeue.FailedTest, error) {
	ids := make([]string, len(refs))
	for i, t := range refs {
		ids[i] = t.ID
	}
	tests, err := d.Store.GetTestCases(ctx, rec.Key.Org, rec.Key.Repo, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]testhealth.TestCase, len(tests))
	for _, tc := range tests {
		byID[tc.ID] = tc
	}
	out := make([]mergequeue.FailedTest, len(refs))
	for i, t := range refs {
		tc, ok := byID[t.ID]
		status := testhealth.Healthy
		if ok && tc.Status.Value != "" {
			status = tc.Status.Value
		}
		out[i] = mergequeue.FailedTest{Name: t.Name, Status: status, Quarantined: ok && testhealth.Quarantined(tc, s)}
	}
	return out, nil
}
