package web

import (
	"net/http"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
)

type uploadFailure struct {
	Name, Href, Kind, Label, Evidence string
}

type uploadPage struct {
	ID, Repo, ReposHref, State, Reason string
	SHA, Branch                        string
	PR                                 int
	Created, Finished                  string
	Files, Runs, Passed, Failed        int
	Skipped, FailedTests, Shown        int
	Guarded                            bool
	Failures                           []uploadFailure
}

// uploadPage serves GET /{org}/uploads/{id} (ours): what an upload held
// and its failed tests (those its record keeps), each labelled as
// label-failures labels it: new, failing on the default branch, known
// flaky or quarantined, with the evidence. An upload of another
// organization is not found.
//
// DynamoDB: 1 GetItem (the upload), 1 GetItem (its repository's
// settings) and 1 BatchGetItem per 33 failed tests (≤ 2).
func (w *Web) uploadPage(rw http.ResponseWriter, r *http.Request, s session) error {
	ctx := r.Context()
	id := r.PathValue("id")
	up, err := w.Store.GetUpload(ctx, s.Org, id)
	if err != nil {
		return err
	}
	page := uploadPage{
		ID: up.ID, Repo: up.Repo.String(), ReposHref: testsHref(s.Org, up.Repo), State: up.State, Reason: up.Reason,
		SHA: up.SHA, Branch: up.Branch, PR: up.PR, Created: up.CreatedAt.UTC().Format("2006-01-02 15:04:05"),
		Files: up.Files, Runs: up.Runs, Passed: up.Passed, Failed: up.Failed, Skipped: up.Skipped,
		FailedTests: up.FailedTestsTotal, Guarded: up.Guarded,
	}
	if !up.FinishedAt.IsZero() {
		page.Finished = up.FinishedAt.UTC().Format("2006-01-02 15:04:05")
	}
	if up.State == store.UploadIngested && len(up.FailedTests) > 0 {
		got, err := w.Health.LabelFailures(ctx, s.Org, up.Repo, up.ID, nil)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
		for _, f := range got.List {
			uf := uploadFailure{Name: f.Name, Kind: f.Label.Kind, Label: f.Label.Text, Evidence: f.Label.Evidence}
			if f.Known {
				uf.Href = testHref(s.Org, up.Repo, f.ID)
			}
			page.Failures = append(page.Failures, uf)
		}
		page.Shown = len(page.Failures)
	}
	return w.render(rw, r, http.StatusOK, &s, view{Title: "Upload " + up.ID,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}, {page.Repo, page.ReposHref}}}, page)
}
