package healthsvc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mainguard/mainguard/shared/blobs"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// Service ingests uploads and keeps test health current.
type Service struct {
	Store  *store.Store
	Blobs  blobs.Store
	Viewer healthview.Viewer
	Now    func() time.Time
	NewID  func() string // event ids
	Log    *slog.Logger
	// Workers is how many batches an ingest records at once (default 8),
	// each a call at a time: DynamoDB latency, not CPU, bounds ingestion.
	Workers int
	// Checks posts each pull request commit's check run once an upload of
	// it is ingested (checkrun.go); nil without GitHub.
	Checks *Checks
}

// New is the service of a function or the local server: bundles are read
// from bundles (nil where nothing is ingested), tests are rendered by v.
func New(st *store.Store, bundles blobs.Store, v healthview.Viewer, now func() time.Time, newID func() string, log *slog.Logger) *Service {
	return &Service{Store: st, Blobs: bundles, Viewer: v, Now: now, NewID: newID, Log: log}
}

// decide is the whole health decision for one test (testhealth.Decide),
// and whether anything of it is to be written.
func decide(tc testhealth.TestCase, commit *testhealth.CommitResult, s testhealth.Settings, now time.Time) (testhealth.TestCase, bool) {
	after, pruned := testhealth.Decide(tc, commit, s, now)
	// Only a new value is written: a read states the evidence (the reason)
	// as of then (testhealth.Status), so writing the new evidence down
	// would cost a write per test per upload, a whole unhealthy test and
	// its index copies at that. A test never classified reads as healthy
	// since it was first seen already.
	statusChanged := testhealth.Previous(after) != testhealth.Previous(tc)
	// Counters that left every window are ignored by every figure; they
	// are removed in batches (testhealth.PruneBatch), not an hour at a
	// time, for the same reason.
	pruneDue := pruned >= testhealth.PruneBatch
	// An override that ended is removed, with its event, by the first
	// decision that sees it: readers apply the repository's rule already.
	changed := statusChanged || pruneDue || after.ExpiredOverride != "" ||
		!after.QuarantineSince.Equal(tc.QuarantineSince) || flakeChanged(tc.Flake, after.Flake)
	if changed && pruned > 0 && !pruneDue {
		// A write goes anyway: it takes what left every window with it.
		after, _ = testhealth.Prune(after, now)
	}
	return after, changed
}

func flakeChanged(a, b *testhealth.FlakeEvidence) bool {
	if a == nil || b == nil {
		return a != b
	}
	return !a.At.Equal(b.At) || a.SHA != b.SHA
}

// apply writes one decision with the status_changed event when the value
// changed. Conflict when another writer got there first.
func (s *Service) apply(ctx context.Context, before, after testhealth.TestCase, settings testhealth.Settings, now time.Time) error {
	var events []store.Event
	if after.ExpiredOverride != "" {
		after.Quarantined = testhealth.Quarantined(after, settings)
		reason := fmt.Sprintf("the %s override ended at %s", after.ExpiredOverride, healthview.Timestamp(after.QuarantineUntil))
		ev, err := s.Viewer.QuarantineSettingEvent(s.NewID(), after, settings, after.ExpiredOverride, ExpiryActor, reason, now)
		if err != nil {
			return err
		}
		events = append(events, ev)
	}
	if prev := testhealth.Previous(before); testhealth.Previous(after) != prev {
		after.Quarantined = testhealth.Quarantined(after, settings)
		ev, err := s.Viewer.StatusChangedEvent(s.NewID(), after, settings, prev, now)
		if err != nil {
			return err
		}
		events = append(events, ev)
	}
	return s.Store.UpdateHealth(ctx, before, after, events)
}

// Reclassify decides the health of tests of one repository again, read
// whole, and writes what changed; commits holds the new evidence of a test
// that failed and passed on one commit (none for a scheduled pass). A
// decision that loses a race with another writer is made again on fresh
// data.
func (s *Service) Reclassify(ctx context.Context, org string, repo repository.Ref, settings testhealth.Settings, commits map[string]testhealth.CommitResult, ids []string) error {
	for try := 0; len(ids) > 0; try++ {
		if try > 6 {
			return errs.E(errs.Unavailable, "tests kept changing while being classified")
		}
		list, err := s.Store.GetTestCases(ctx, org, repo, ids)
		if err != nil {
			return err
		}
		now := s.Now()
		var retry []string
		for _, tc := range list {
			var commit *testhealth.CommitResult
			if c, ok := commits[tc.ID]; ok {
				commit = &c
			}
			after, changed := decide(tc, commit, settings, now)
			if !changed {
				continue
			}
			err := s.apply(ctx, tc, after, settings, now)
			switch {
			case errs.Is(err, errs.Conflict):
				retry = append(retry, tc.ID)
			case err != nil:
				return err
			}
		}
		ids = retry
	}
	return nil
}

// Sweep reclassifies every unhealthy test of every organization, so that
// time-based resolutions (recovery days, stale tests, runs leaving the
// window) happen without new uploads. Healthy tests cannot become unhealthy
// by time passing, so they are not read. The scheduled function calls it.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	orgs, err := s.Store.ListOrgs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, org := range orgs {
		repos, err := s.Store.ListRepos(ctx, org)
		if err != nil {
			return n, err
		}
		for _, repo := range repos {
			settings := repo.Settings()
			for _, status := range []string{testhealth.Flaky, testhealth.Broken} {
				q := store.PageQuery{Limit: 100}
				for {
					page, err := s.Store.ListUnhealthy(ctx, org, repo.Ref, status, q)
					if err != nil {
						return n, err
					}
					ids := make([]string, len(page.Tests))
					for i, tc := range page.Tests {
						ids[i] = tc.ID
					}
					if err := s.Reclassify(ctx, org, repo.Ref, settings, nil, ids); err != nil {
						return n, err
					}
					n += len(ids)
					if page.Next == "" {
						break
					}
					q.After = page.Next
				}
			}
		}
	}
	return n, nil
}

// ExpiryActor is who ends an override whose end has come, in its event.
var ExpiryActor = healthview.Actor{FullName: "mainguard (the override's end)"}

// SetOverride sets a test's quarantine override (testhealth.AlwaysQuarantine,
// testhealth.NeverQuarantine or "" for unspecified) until until (zero: no
// end; an override with an end applies up to it, then the repository's
// rule applies again, testhealth.Expire) and writes the
// test_case.quarantining_setting_changed event with it. Setting the value
// it has, with the same end, changes nothing and emits nothing.
func (s *Service) SetOverride(ctx context.Context, org string, repo repository.Ref, id, override string, until time.Time, actor healthview.Actor, reason string) (testhealth.TestCase, error) {
	switch override {
	case "", testhealth.AlwaysQuarantine, testhealth.NeverQuarantine:
	default:
		return testhealth.TestCase{}, errs.E(errs.Invalid, "override must be ALWAYS_QUARANTINE, NEVER_QUARANTINE or UNSPECIFIED, got %q", override)
	}
	switch {
	case until.IsZero():
	case override == "":
		return testhealth.TestCase{}, errs.E(errs.Invalid, "an end (until) needs an override, ALWAYS_QUARANTINE or NEVER_QUARANTINE: UNSPECIFIED is the repository's rule already")
	case !until.After(s.Now()):
		return testhealth.TestCase{}, errs.E(errs.Invalid, "until must be in the future, got %s", healthview.Timestamp(until))
	}
	until = until.UTC()
	for try := 0; ; try++ {
		r, tc, err := s.Store.GetRepoAndTest(ctx, org, repo, id)
		if err != nil {
			return testhealth.TestCase{}, err
		}
		// An override that ended reads as UNSPECIFIED already; unsetting it
		// is left to the next decision, which removes it with its event.
		if tc.QuarantineOverride == override && (override == "" || tc.QuarantineUntil.Equal(until)) {
			return tc, nil
		}
		now := s.Now()
		after := tc
		after.QuarantineOverride, after.QuarantineUntil, after.ExpiredOverride = override, until, ""
		if after.QuarantineCandidate() != "" && tc.QuarantineCandidate() == "" {
			after.QuarantineSince = now
		}
		settings := r.Settings()
		after.Quarantined = testhealth.Quarantined(after, settings)
		ev, err := s.Viewer.QuarantineSettingEvent(s.NewID(), after, settings, tc.QuarantineOverride, actor, reason, now)
		if err != nil {
			return testhealth.TestCase{}, err
		}
		err = s.Store.UpdateHealth(ctx, tc, after, []store.Event{ev})
		if errs.Is(err, errs.Conflict) && try < 5 {
			continue
		}
		return after, err
	}
}
