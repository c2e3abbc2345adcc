package web

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// maxRepos is how many repositories a page of the home shows and reads
// figures of (Web.ReposPerPage, when set).
const maxRepos = 50

type orgPage struct {
	Queues []queueRow // of the page's repositories
	Repos  []repoRow
	Pager  pager
}

type queueRow struct {
	Repo, Branch, Href string
	figures
}

type repoRow struct {
	Repo, Href                   string
	Flaky, Broken, Quarantined   int
	QuarantineOn, AutoQuarantine bool
}

// orgHome serves GET /{org}: its repositories with their counts of flaky,
// broken and quarantined tests, and their queues, a page of repositories
// at a time in name order: ?repos_after= names the last of the page before.
//
// DynamoDB, per page: 1 Query (the repositories; a page per 1 MB), then
// per repository of the page (at most maxRepos) 1 Query of its queues
// (GSI2, snapshots included), the owner's GetItem where it has queues
// (tenancy, cached) and up to 3 counting Queries (flaky, broken,
// quarantined; each a page per 1 MB of index keys).
func (w *Web) orgHome(rw http.ResponseWriter, r *http.Request, s session) error {
	ctx := r.Context()
	repos, err := w.Store.ListRepos(ctx, s.Org)
	if err != nil {
		return err
	}
	if s.Login != "" {
		// A person signed in with GitHub sees the repositories they can
		// read there (a GitHub call per repository, kept a minute).
		var visible []store.Repo
		for _, repo := range repos {
			switch err := w.seeRepo(ctx, s, repo.Ref); {
			case err == nil:
				visible = append(visible, repo)
			case !errs.Is(err, errs.NotFound):
				return err
			}
		}
		repos = visible
	}
	slices.SortFunc(repos, func(a, b store.Repo) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
	page := orgPage{}
	if after := r.URL.Query().Get("repos_after"); after != "" {
		// Any name will do: the page starts after where it would sort.
		i, found := slices.BinarySearchFunc(repos, after, func(r store.Repo, name string) int { return strings.Compare(r.Ref.String(), name) })
		if found {
			i++
		}
		repos, page.Pager.First = repos[i:], orgHref(s.Org)
	}
	if n := cmp.Or(w.ReposPerPage, maxRepos); len(repos) > n {
		repos = repos[:n]
		page.Pager.Next = orgHref(s.Org) + "?repos_after=" + url.QueryEscape(repos[n-1].Ref.String())
	}
	now := w.Now()
	for _, repo := range repos {
		queues, err := w.Store.OrgQueuesOfRepo(ctx, s.Org, repo.Ref)
		if err != nil {
			return err
		}
		if len(queues) > 0 {
			if owns, err := w.Queues.Tenancy.Owns(ctx, s.Org, repo.Ref); err != nil {
				return err
			} else if !owns {
				queues = nil // made before ownership, on a repository not the organization's
			}
		}
		for _, q := range queues {
			page.Queues = append(page.Queues, queueRow{
				Repo: q.Key.Repo.String(), Branch: q.Key.Branch, Href: queueHref(s.Org, q.Key.Repo, q.Key.Branch),
				figures: figuresOf(q.Snapshot, now),
			})
		}
		row := repoRow{Repo: repo.Ref.String(), Href: testsHref(s.Org, repo.Ref)}
		if row.Flaky, err = w.Store.CountUnhealthy(ctx, s.Org, repo.Ref, testhealth.Flaky); err != nil {
			return err
		}
		if row.Broken, err = w.Store.CountUnhealthy(ctx, s.Org, repo.Ref, testhealth.Broken); err != nil {
			return err
		}
		settings := repo.Settings()
		row.QuarantineOn, row.AutoQuarantine = settings.QuarantineEnabled, settings.AutoQuarantine
		if settings.QuarantineEnabled {
			// What list-quarantined-tests counts: the candidates, only the
			// always-overridden ones unless quarantine is automatic.
			if row.Quarantined, err = w.Store.CountQuarantineCandidates(ctx, s.Org, repo.Ref, !settings.AutoQuarantine); err != nil {
				return err
			}
		}
		page.Repos = append(page.Repos, row)
	}
	return w.render(rw, r, http.StatusOK, &s, view{Title: s.Org}, page)
}
