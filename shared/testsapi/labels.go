package testsapi

import (
	"fmt"
	"net/http"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
)

type labelFailuresRequest struct {
	Repo       *repository.Ref `json:"repo"`
	OrgURLSlug string          `json:"org_url_slug"`
	UploadID   string          `json:"upload_id"`
	TestIDs    []string        `json:"test_ids"`
}

type labelledFailure struct {
	TestID   string `json:"test_id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Label    string `json:"label"`
	Branch   string `json:"branch,omitempty"`
	Evidence string `json:"evidence"`
	HTMLURL  string `json:"html_url,omitempty"`
}

type labelledUpload struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	HTMLURL string `json:"html_url"`
}

// LabelFailures serves POST /flaky-tests/label-failures (ours): "was this
// failure mine?" for the tests named by test_ids (at most 100), or for the
// failures of upload upload_id when none are named: each with one label
// (quarantined, known flaky, failing on the default branch, or new) and
// its evidence, from what test health already knows.
func (h *Handlers) LabelFailures() http.Handler {
	return api.JSON(func(r *http.Request, req *labelFailuresRequest) (any, error) {
		repo, err := api.RequireRepo(req.Repo, "repo")
		if err != nil {
			return nil, err
		}
		if err := api.RequireString(req.OrgURLSlug, "org_url_slug"); err != nil {
			return nil, err
		}
		if req.UploadID == "" && len(req.TestIDs) == 0 {
			return nil, errs.E(errs.Invalid, "upload_id or test_ids is required")
		}
		if req.UploadID != "" {
			if _, err := api.RequireUUID(req.UploadID, "upload_id"); err != nil {
				return nil, err
			}
		}
		for i, id := range req.TestIDs {
			if _, err := api.RequireUUID(id, fmt.Sprintf("test_ids[%d]", i)); err != nil {
				return nil, err
			}
		}
		org, err := api.OwnOrg(r.Context(), req.OrgURLSlug)
		if err != nil {
			return nil, err
		}
		got, err := h.Health.LabelFailures(r.Context(), org, repo, req.UploadID, req.TestIDs)
		if err != nil {
			return nil, err
		}
		out := struct {
			Upload   *labelledUpload   `json:"upload,omitempty"`
			Branch   string            `json:"branch"`
			Failures []labelledFailure `json:"failures"`
		}{Branch: got.Branch, Failures: []labelledFailure{}}
		if u := got.Upload; u != nil {
			out.Upload = &labelledUpload{ID: u.ID, State: u.State, HTMLURL: h.Viewer.UploadURL(org, u.ID)}
		}
		for _, f := range got.List {
			out.Failures = append(out.Failures, labelledFailure{TestID: f.ID, Name: f.Name, Kind: f.Label.Kind, Label: f.Label.Text,
				Branch: f.Label.Branch, Evidence: f.Label.Evidence, HTMLURL: f.HTMLURL})
		}
		return out, nil
	})
}
