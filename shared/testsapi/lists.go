package testsapi

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/healthview"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

type listRequest struct {
	Repo       *repository.Ref `json:"repo"`
	OrgURLSlug string          `json:"org_url_slug"`
	PageQuery  *PageQuery      `json:"page_query"`
	Status     string          `json:"status"`
	StartTime  string          `json:"start_time"`
	EndTime    string          `json:"end_time"`
}

// listed is what every list request shares once checked.
type listed struct {
	org   string
	repo  store.Repo
	size  int
	pager pager
}

// openList checks the common fields in the contract's order (shape 400,
// then organization and repository 404) and reads the repository.
func (h *Handlers) openList(r *http.Request, req *listRequest, extra func() error) (listed, error) {
	ref, err := api.RequireRepo(req.Repo, "repo")
	if err != nil {
		return listed{}, err
	}
	if err := api.RequireString(req.OrgURLSlug, "org_url_slug"); err != nil {
		return listed{}, err
	}
	size, err := pageSize(req.PageQuery)
	if err != nil {
		return listed{}, err
	}
	if extra != nil {
		if err := extra(); err != nil {
			return listed{}, err
		}
	}
	ctx := r.Context()
	org, err := api.OwnOrg(ctx, req.OrgURLSlug)
	if err != nil {
		return listed{}, err
	}
	repo, err := h.Store.GetRepo(ctx, org, ref)
	if err != nil {
		return listed{}, err
	}
	secret, err := h.Secret(ctx)
	if err != nil {
		return listed{}, err
	}
	return listed{org: org, repo: repo, size: size, pager: pager{secret}}, nil
}

// cursorFor reads the request's token, or starts at page 0.
func (l listed) cursorFor(req *listRequest, query string) (cursor, error) {
	if req.PageQuery.PageToken == "" {
		return cursor{Query: query, Size: l.size}, nil
	}
	return l.pager.open(req.PageQuery.PageToken, query, l.size)
}

// indexPage reads the page c selects from an index list of total rows.
func (l listed) indexPage(c cursor, total int, read func(store.PageQuery) (store.Page, error), key func(testhealth.TestCase) string) ([]testhealth.TestCase, Page, error) {
	q := store.PageQuery{Limit: l.size, After: c.After, Before: c.Before, Last: c.Last}
	pages := pageCount(total, l.size)
	if c.Last {
		q.Limit = total - (pages-1)*l.size
	}
	if total == 0 || c.Index >= pages {
		return nil, l.pager.pageOf(c, total, "", ""), nil
	}
	page, err := read(q)
	if err != nil {
		return nil, Page{}, err
	}
	first, last := "", ""
	if n := len(page.Tests); n > 0 {
		first, last = key(page.Tests[0]), key(page.Tests[n-1])
	}
	return page.Tests, l.pager.pageOf(c, total, first, last), nil
}

// QuarantinedTest is an item of list-quarantined-tests.
type QuarantinedTest struct {
	TestCaseID        string   `json:"test_case_id"`
	Name              string   `json:"name"`
	Parent            *string  `json:"parent"`
	File              *string  `json:"file"`
	Classname         *string  `json:"classname"`
	Status            string   `json:"status"`
	Codeowners        []string `json:"codeowners"`
	QuarantineSetting string   `json:"quarantine_setting"`
	// QuarantineSettingUntil is when an ALWAYS_QUARANTINE override ends,
	// when it has an end (ours).
	QuarantineSettingUntil string `json:"quarantine_setting_until,omitempty"`
	QuarantinedAt          string `json:"quarantined_at"`
	StatusLastUpdatedAt    string `json:"status_last_updated_at"`
	Variant                string `json:"variant"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListQuarantined serves POST /flaky-tests/list-quarantined-tests: the
// tests quarantined now, from the quarantine index (always-quarantined
// first, then by id). Nothing is quarantined while the repository has
// quarantining off.
func (h *Handlers) ListQuarantined() http.Handler {
	return api.JSON(func(r *http.Request, req *listRequest) (any, error) {
		l, err := h.openList(r, req, nil)
		if err != nil {
			return nil, err
		}
		ctx := r.Context()
		settings := l.repo.Settings()
		alwaysOnly := !settings.AutoQuarantine
		query := fmt.Sprintf("quarantined|%s|%t", l.repo.Ref.Key(), alwaysOnly)
		c, err := l.cursorFor(req, query)
		if err != nil {
			return nil, err
		}
		total := 0
		if settings.QuarantineEnabled {
			if total, err = h.Store.CountQuarantineCandidates(ctx, l.org, l.repo.Ref, alwaysOnly); err != nil {
				return nil, err
			}
		}
		tests, page, err := l.indexPage(c, total, func(q store.PageQuery) (store.Page, error) {
			return h.Store.ListQuarantineCandidates(ctx, l.org, l.repo.Ref, alwaysOnly, q)
		}, func(tc testhealth.TestCase) string { return store.IndexKey(tc, true) })
		if err != nil {
			return nil, err
		}
		items := []QuarantinedTest{}
		for _, tc := range tests {
			view := h.Viewer.Brief(tc, settings, h.Now())
			since := tc.QuarantineSince
			if since.IsZero() {
				since = tc.Status.Timestamp
			}
			items = append(items, QuarantinedTest{
				TestCaseID: tc.ID, Name: tc.Name, Parent: nullable(tc.Parent), File: nullable(tc.FilePath),
				Classname: nullable(tc.Classname), Status: strings.ToUpper(view.Status.Value),
				Codeowners: view.Codeowners, QuarantineSetting: tc.QuarantineCandidate(), QuarantineSettingUntil: healthview.OverrideUntil(tc),
				QuarantinedAt: healthview.Timestamp(since), StatusLastUpdatedAt: view.Status.Timestamp, Variant: tc.Variant,
			})
		}
		return struct {
			QuarantinedTests []QuarantinedTest `json:"quarantined_tests"`
			Page             Page              `json:"page"`
		}{items, page}, nil
	})
}

// ListUnhealthy serves POST /flaky-tests/list-unhealthy-tests: the tests of
// one status, FLAKY or BROKEN, by id, without the failure figures.
func (h *Handlers) ListUnhealthy() http.Handler {
	return api.JSON(func(r *http.Request, req *listRequest) (any, error) {
		var status string
		l, err := h.openList(r, req, func() error {
			switch strings.ToLower(strings.TrimSpace(req.Status)) {
			case testhealth.Flaky, testhealth.Broken:
				status = strings.ToLower(strings.TrimSpace(req.Status))
				return nil
			case "":
				return errs.E(errs.Invalid, "status is required: FLAKY or BROKEN")
			}
			return errs.E(errs.Invalid, "status must be FLAKY or BROKEN, got %s", api.Quote(req.Status))
		})
		if err != nil {
			return nil, err
		}
		ctx := r.Context()
		c, err := l.cursorFor(req, "unhealthy|"+l.repo.Ref.Key()+"|"+status)
		if err != nil {
			return nil, err
		}
		total, err := h.Store.CountUnhealthy(ctx, l.org, l.repo.Ref, status)
		if err != nil {
			return nil, err
		}
		tests, page, err := l.indexPage(c, total, func(q store.PageQuery) (store.Page, error) {
			return h.Store.ListUnhealthy(ctx, l.org, l.repo.Ref, status, q)
		}, func(tc testhealth.TestCase) string { return store.IndexKey(tc, false) })
		if err != nil {
			return nil, err
		}
		settings := l.repo.Settings()
		items := []healthview.TestCase{}
		for _, tc := range tests {
			tc.Quarantined = testhealth.Quarantined(tc, settings)
			items = append(items, h.Viewer.Brief(tc, settings, h.Now()))
		}
		return struct {
			Tests []healthview.TestCase `json:"tests"`
			Page  Page                  `json:"page"`
		}{items, page}, nil
	})
}

// maxFailingRange is the longest range list-failing-tests accepts.
const maxFailingRange = 7 * 24 * time.Hour

// ListFailing serves POST /flaky-tests/list-failing-tests: the distinct
// tests with a failed run in [start_time, end_time), the most recently
// failed first. The failed runs of the range are read from their per-day
// index (at most 8 queries); pages are offsets into that list.
func (h *Handlers) ListFailing() http.Handler {
	return api.JSON(func(r *http.Request, req *listRequest) (any, error) {
		var start, end time.Time
		l, err := h.openList(r, req, func() error {
			var err error
			if start, err = parseTime(req.StartTime, "start_time"); err != nil {
				return err
			}
			if end, err = parseTime(req.EndTime, "end_time"); err != nil {
				return err
			}
			if !end.After(start) {
				return errs.E(errs.Invalid, "end_time must be after start_time")
			}
			if end.Sub(start) > maxFailingRange {
				return errs.E(errs.Invalid, "end_time must be at most 7 days after start_time")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		ctx := r.Context()
		c, err := l.cursorFor(req, fmt.Sprintf("failing|%s|%d|%d", l.repo.Ref.Key(), start.UnixMilli(), end.UnixMilli()))
		if err != nil {
			return nil, err
		}
		failed, err := h.Store.FailedTestsBetween(ctx, l.org, l.repo.Ref, start, end)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(failed))
		for id := range failed {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool {
			a, b := failed[ids[i]], failed[ids[j]]
			if !a.Equal(b) {
				return a.After(b)
			}
			return ids[i] < ids[j]
		})
		pages := pageCount(len(ids), l.size)
		if c.Last {
			c.Index = max(pages-1, 0)
		}
		from := min(c.Index*l.size, len(ids))
		pageIDs := ids[from:min(from+l.size, len(ids))]
		tests, err := h.Store.GetTestCases(ctx, l.org, l.repo.Ref, pageIDs)
		if err != nil {
			return nil, err
		}
		settings := l.repo.Settings()
		now := h.Now()
		items := []healthview.TestCase{}
		for _, tc := range tests {
			tc.Quarantined = testhealth.Quarantined(tc, settings)
			items = append(items, h.Viewer.Full(tc, settings, now))
		}
		return struct {
			Tests []healthview.TestCase `json:"tests"`
			Page  Page                  `json:"page"`
		}{items, l.pager.pageOf(c, len(ids), "", "")}, nil
	})
}

func parseTime(v, field string) (time.Time, error) {
	if strings.TrimSpace(v) == "" {
		return time.Time{}, errs.E(errs.Invalid, "%s is required", field)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, errs.E(errs.Invalid, "%s must be an RFC 3339 timestamp like 2026-07-23T01:32:50.000Z, got %s", field, api.Quote(v))
	}
	return t.UTC(), nil
}
