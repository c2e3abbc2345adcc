package healthsvc

import (
	"context"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Failure is a failed test with its label: "was this failure mine?".
type Failure struct {
	ID, Name string
	Label    testhealth.FailureLabel
	// Known: test health holds the test (an upload not yet ingested may
	// name a test it has never seen; its label is then new).
	Known   bool
	HTMLURL string // its page; "" when not Known
}

// Failures are the labelled failures of an upload, or of the tests named.
type Failures struct {
	// Upload is the upload named; nil when none was.
	Upload *store.Upload
	// Branch is the branch a failing_on_branch label names: the
	// repository's default branch, the one test health follows streaks on.
	Branch string
	List   []Failure // in testhealth.LabelOrder, then by name
}

// MaxLabelled bounds the tests one call labels.
const MaxLabelled = 100

// LabelFailures labels failed tests of a repository: the tests named by id
// (at most MaxLabelled), or, when none are, the failures of the upload
// named (those its record keeps, store.MaxFailedTests). With an upload,
// its runs are the run labelled: once ingested, its own failures are not
// earlier ones, nor, on the default branch, part of the streak before it.
// An unknown repository or upload is errs.NotFound.
func (s *Service) LabelFailures(ctx context.Context, org string, ref repository.Ref, uploadID string, ids []string) (Failures, error) {
	repo, err := s.Store.GetRepo(ctx, org, ref)
	if err != nil {
		return Failures{}, err
	}
	settings := repo.Settings()
	out := Failures{Branch: settings.DefaultBranch}
	var up *store.Upload
	if uploadID != "" {
		u, err := s.Store.GetUpload(ctx, org, uploadID)
		if err == nil && u.Repo.Key() != repo.Ref.Key() {
			err = errs.E(errs.NotFound, "upload %s not found", uploadID)
		}
		if err != nil {
			return Failures{}, err
		}
		up, out.Upload = &u, &u
	}
	names := map[string]string{}
	if len(ids) == 0 && up != nil {
		for _, f := range up.FailedTests {
			ids = append(ids, f.ID)
			names[f.ID] = f.Name
		}
	}
	run := func(id string) testhealth.FailedRun {
		if up == nil || up.State != store.UploadIngested {
			return testhealth.FailedRun{At: s.Now()}
		}
		r := testhealth.FailedRun{At: up.RunsAt, Recorded: true}
		if r.At.IsZero() {
			r.At = up.CreatedAt
		}
		if !up.Guarded && up.Branch == settings.DefaultBranch {
			r.Streak = 1
			for _, f := range up.FailedTests {
				if f.ID == id && f.Failed > 0 {
					r.Streak = f.Failed
				}
			}
		}
		return r
	}
	out.List, err = s.label(ctx, org, repo.Ref, settings, ids, names, run)
	return out, err
}

// label labels the tests ids (lower-cased, deduplicated, at most
// MaxLabelled) as failed in the run run(id) says; names are those known
// besides the stored tests'.
func (s *Service) label(ctx context.Context, org string, ref repository.Ref, settings testhealth.Settings, ids []string, names map[string]string, run func(id string) testhealth.FailedRun) ([]Failure, error) {
	seen := map[string]bool{}
	var want []string
	for _, id := range ids {
		if id = strings.ToLower(id); !seen[id] && len(want) < MaxLabelled {
			seen[id] = true
			want = append(want, id)
		}
	}
	tests, err := s.Store.GetTestCases(ctx, org, ref, want)
	if err != nil {
		return nil, err
	}
	byID := map[string]testhealth.TestCase{}
	for _, tc := range tests {
		byID[strings.ToLower(tc.ID)] = tc
	}
	now := s.Now()
	out := make([]Failure, 0, len(want))
	for _, id := range want {
		f := Failure{ID: id, Name: names[id]}
		if tc, ok := byID[id]; ok {
			f.Name, f.Known, f.HTMLURL = tc.Name, true, s.Viewer.TestURL(tc)
			f.Label = testhealth.Label(tc, settings, run(id), now)
		} else {
			f.Label = testhealth.FailureLabel{Kind: testhealth.LabelNew, Text: "new",
				Evidence: "no run of it recorded before: probably this change"}
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Failure) int {
		if d := slices.Index(testhealth.LabelOrder, a.Label.Kind) - slices.Index(testhealth.LabelOrder, b.Label.Kind); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}
