package githubsim

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
)

// Check suites: GitHub groups the check runs of one App on one commit in a
// suite, whose status and conclusion follow its runs, and announces a
// suite whose runs have all completed with a check_suite "completed"
// webhook. Here a suite is derived from its runs rather than kept.

type checkSuite struct {
	sha   string
	appID int64
	runs  []*checkRun
}

// checkSuiteID is the id of App app's suite on sha: stable, so runs,
// webhooks and the suites list agree.
func checkSuiteID(sha string, app int64) int64 {
	var h int64
	for _, c := range sha[:min(12, len(sha))] {
		h = h*16 + int64(c%16)
	}
	return (h ^ app*2654435761) & 0x7fffffff
}

// suites lists the check suites on sha, by App id.
func (r *repo) suites(sha string) []checkSuite {
	by := map[int64]*checkSuite{}
	for _, c := range r.checks[sha] {
		if by[c.appID] == nil {
			by[c.appID] = &checkSuite{sha: sha, appID: c.appID}
		}
		by[c.appID].runs = append(by[c.appID].runs, c)
	}
	out := make([]checkSuite, 0, len(by))
	for _, cs := range by {
		out = append(out, *cs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].appID < out[j].appID })
	return out
}

// suiteConclusions orders conclusions as a suite takes the first present.
var suiteConclusions = []string{"action_required", "cancelled", "timed_out", "failure", "stale", "success", "neutral", "skipped"}

// state is the suite's status (queued, in_progress or completed) and,
// when completed, its conclusion.
func (cs checkSuite) state() (status, conclusion string) {
	queued, completed := true, true
	for _, c := range cs.runs {
		queued = queued && c.status == "queued"
		completed = completed && c.status == "completed"
	}
	switch {
	case completed:
		for _, want := range suiteConclusions {
			if slices.ContainsFunc(cs.runs, func(c *checkRun) bool { return c.conclusion == want }) {
				return "completed", want
			}
		}
		return "completed", "neutral"
	case queued:
		return "queued", ""
	}
	return "in_progress", ""
}

func (s *Server) checkSuiteJSON(r *repo, cs checkSuite) obj {
	status, conclusion := cs.state()
	var concl, headBranch any
	if conclusion != "" {
		concl = conclusion
	}
	if names, err := r.git.branches(); err == nil {
		for _, b := range names {
			if r.git.branchHead(b) == cs.sha {
				headBranch = b
				break
			}
		}
	}
	id := checkSuiteID(cs.sha, cs.appID)
	created := cs.runs[0].startedAt
	prs := []obj{}
	for _, p := range r.sortedPulls() {
		if p.state == "open" && p.headSHA == cs.sha {
			prs = append(prs, obj{"number": p.number, "head": obj{"ref": p.headRef, "sha": p.headSHA},
				"base": obj{"ref": p.baseRef, "sha": r.git.branchHead(p.baseRef)}})
		}
	}
	return obj{
		"id":                      id,
		"node_id":                 fmt.Sprintf("CS_%d", id),
		"head_branch":             headBranch,
		"head_sha":                cs.sha,
		"status":                  status,
		"conclusion":              concl,
		"url":                     s.apiURL("/repos/%s/check-suites/%d", r.fullName(), id),
		"check_runs_url":          s.apiURL("/repos/%s/check-suites/%d/check-runs", r.fullName(), id),
		"app":                     s.appJSON(cs.appID),
		"pull_requests":           prs,
		"latest_check_runs_count": len(cs.runs),
		"created_at":              ts(created),
		"updated_at":              ts(s.now()),
	}
}

// getCheckSuites answers GET /repos/{o}/{r}/commits/{ref}/check-suites,
// filtered by app_id and check_name as GitHub documents.
func (s *Server) getCheckSuites(w http.ResponseWriter, r *http.Request, rp *repo, ref string) {
	sha := rp.git.resolve(ref)
	if sha == "" {
		validation(w, "No commit found for SHA: "+ref)
		return
	}
	q := r.URL.Query()
	var list []checkSuite
	for _, cs := range rp.suites(sha) {
		if id := q.Get("app_id"); id != "" && id != fmt.Sprint(cs.appID) {
			continue
		}
		if name := q.Get("check_name"); name != "" && !slices.ContainsFunc(cs.runs, func(c *checkRun) bool { return c.name == name }) {
			continue
		}
		list = append(list, cs)
	}
	lo, hi := page(w, r, len(list))
	items := []obj{}
	for _, cs := range list[lo:hi] {
		items = append(items, s.checkSuiteJSON(rp, cs))
	}
	writeJSON(w, 200, obj{"total_count": len(list), "check_suites": items})
}

// checkSuiteChanged announces App app's suite on sha once a change left
// every run of it completed. Callers hold s.mu.
func (s *Server) checkSuiteChanged(r *repo, sha string, app int64) {
	if s.hook.url == "" {
		return
	}
	for _, cs := range r.suites(sha) {
		if cs.appID != app {
			continue
		}
		if status, _ := cs.state(); status == "completed" {
			s.emit("check_suite", obj{
				"action":      "completed",
				"check_suite": s.checkSuiteJSON(r, cs),
				"repository":  s.repoJSON(r),
				"sender":      userJSON(s.appSlug(app) + "[bot]"),
			})
		}
	}
}
