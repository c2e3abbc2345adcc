package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// maxRepos bounds the repositories the home page reads figures of.
const maxRepos = 50

type orgPage struct {
	Queues []queueRow
	Repos  []repoRow
	More   int // repositories left out (beyond maxRepos)
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

// orgHome serves GET /{org}: its queues and its repositories with their
// counts of flaky, broken and quarantined tests.
//
// DynamoDB: 1 Query (the repositories), then per repository (at most
// maxRepos) 1 Query of its queues (GSI2, snapshots included) and up to 3
// counting Queries (flaky, broken, quarantined; each a page per 1 MB of
// index keys).
func (w *Web) orgHome(rw http.ResponseWriter, r *http.Request, s session) error {
	ctx := r.Context()
	repos, err := w.Store.ListRepos(ctx, s.Org)
	if err != nil {
		return err
	}
	slices.SortFunc(repos, func(a, b store.Repo) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
	page := orgPage{}
	if len(repos) > maxRepos {
		page.More, repos = len(repos)-maxRepos, repos[:maxRepos]
	}
	now := w.Now()
	for _, repo := range repos {
		queues, err := w.Store.OrgQueuesOfRepo(ctx, s.Org, repo.Ref)
		if err != nil {
			return err
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
		settings := testhealth.SettingsOf(repo.HealthSettings, repo.Branch())
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
	return w.render(rw, r, http.StatusOK, "org.html", &s, view{Title: s.Org, Page: page})
}
