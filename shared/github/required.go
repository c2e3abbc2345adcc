package github

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	gh "github.com/google/go-github/v92/github"

	"github.com/mainguard/mainguard/shared/errs"
)

// RequiredCheck is one status check a branch requires before a pull
// request merges into it: a commit status context or a check run name,
// and the GitHub App that must provide it (0: any).
type RequiredCheck struct {
	Context string
	AppID   int64
}

// RequiredChecks returns the status checks branch requires: those of
// classic branch protection, then those of every active ruleset that
// applies to it (the repository's and its organization's, as GitHub
// merges them), each context and App once. A branch with neither requires
// none.
//
// Classic protection is read from GET /repos/{o}/{r}/branches/{b}, whose
// protection summary anyone who can read the repository sees, rather than
// from the protection endpoints, which need the administration
// permission the App does not ask for; rulesets from GET
// /repos/{o}/{r}/rules/branches/{b} (metadata permission).
func (c *Client) RequiredChecks(ctx context.Context, repo Repo, branch string) ([]RequiredCheck, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	ctx = forRepo(ctx, repo)
	var out []RequiredCheck
	add := func(context string, app int64) {
		if app < 0 {
			app = 0 // -1: any App, as classic protection spells it
		}
		rc := RequiredCheck{Context: context, AppID: app}
		if context != "" && !slices.Contains(out, rc) {
			out = append(out, rc)
		}
	}
	// Not Repositories.GetBranch: it reports GitHub's answers other than
	// 200 as bare errors, losing rate limits and 404s.
	req, err := c.gh.NewRequest(ctx, http.MethodGet, fmt.Sprintf("repos/%s/%s/branches/%s", url.PathEscape(repo.Owner), url.PathEscape(repo.Name), url.PathEscape(branch)), nil)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "github: branch %q", branch)
	}
	var b *gh.Branch
	if _, err := c.gh.Do(req, &b); err != nil {
		werr := c.wrap(err, "get branch "+branch)
		if !statusIs(werr, http.StatusNotFound) { // a missing branch may still have rules
			return nil, werr
		}
	}
	if rs := b.GetProtection().GetRequiredStatusChecks(); rs != nil {
		if rs.Checks != nil {
			for _, ch := range *rs.Checks {
				add(ch.Context, ch.GetAppID())
			}
		}
		if rs.Contexts != nil {
			for _, s := range *rs.Contexts { // the same checks without their App; any not in checks
				if !slices.ContainsFunc(out, func(rc RequiredCheck) bool { return rc.Context == s }) {
					add(s, 0)
				}
			}
		}
	}
	opt := &gh.ListOptions{PerPage: 100}
	for {
		rules, resp, err := c.gh.Repositories.ListRulesForBranch(ctx, repo.Owner, repo.Name, branch, opt)
		if err != nil {
			return nil, c.wrap(err, "get the rules of branch "+branch)
		}
		if rules != nil {
			for _, r := range rules.RequiredStatusChecks {
				for _, ch := range r.Parameters.RequiredStatusChecks {
					add(ch.Context, ch.GetIntegrationID())
				}
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

// Contexts lists the names of required checks, each once, in order: what
// the queue requires of a test branch.
func Contexts(required []RequiredCheck) []string {
	var out []string
	for _, rc := range required {
		if !slices.Contains(out, rc.Context) {
			out = append(out, rc.Context)
		}
	}
	return out
}

// FromRequiredApps drops the checks that a required check bound to an App
// does not accept: one of its name from another App, from no App, or from
// one that could not be told. Checks of names no such requirement binds
// are kept.
func FromRequiredApps(required []RequiredCheck, checks []Check) []Check {
	apps := map[string][]int64{}
	for _, rc := range required {
		if rc.AppID != 0 {
			apps[rc.Context] = append(apps[rc.Context], rc.AppID)
		}
	}
	if len(apps) == 0 {
		return checks
	}
	out := make([]Check, 0, len(checks))
	for _, ch := range checks {
		if bound, ok := apps[ch.Name]; !ok || ch.AppID != 0 && slices.Contains(bound, ch.AppID) {
			out = append(out, ch)
		}
	}
	return out
}

// appIDs caches the App id behind each bot user that created a commit
// status: GitHub's statuses name their creator, not their App.
type appIDs struct {
	mu sync.Mutex
	m  map[string]int64 // bot login → App id (0: none found)
}

// botApp returns the id of the App whose bot user login is ("slug[bot]"),
// asking GET /apps/{slug} once per login; 0 for a login that is not an
// App's bot, or an App GitHub does not show.
func (c *Client) botApp(ctx context.Context, login string) (int64, error) {
	slug, ok := strings.CutSuffix(login, "[bot]")
	if !ok || slug == "" {
		return 0, nil
	}
	c.apps.mu.Lock()
	id, known := c.apps.m[login]
	c.apps.mu.Unlock()
	if known {
		return id, nil
	}
	app, _, err := c.gh.Apps.Get(ctx, slug)
	if err != nil {
		werr := c.wrap(err, "get app "+slug)
		if !statusIs(werr, http.StatusNotFound) {
			return 0, werr
		}
	}
	id = app.GetID()
	c.apps.mu.Lock()
	if c.apps.m == nil {
		c.apps.m = map[string]int64{}
	}
	c.apps.m[login] = id
	c.apps.mu.Unlock()
	return id, nil
}
