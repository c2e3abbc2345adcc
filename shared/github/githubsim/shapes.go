package githubsim

import (
	"fmt"
	"strings"
	"time"
)

// The functions here render GitHub's documented REST shapes. Only fields a
// client could reasonably read are present, always under GitHub's names, so a
// payload decoded by a real GitHub client library finds what it expects.

type obj = map[string]any

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

func (s *Server) apiURL(format string, args ...any) string {
	return s.URL() + fmt.Sprintf(format, args...)
}

func userJSON(login string) obj {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot" // an App's bot user, as GitHub types it
	}
	return obj{"login": login, "id": loginID(login), "type": typ, "site_admin": false}
}

// loginID derives a stable numeric id from a login, so the same user always
// has the same id without a user table.
func loginID(login string) int64 {
	var h int64 = 1000
	for _, c := range login {
		h = h*31 + int64(c)
		h &= 0x7fffffff
	}
	return h
}

func (s *Server) repoJSON(r *repo) obj {
	return obj{
		"id":             r.id,
		"node_id":        fmt.Sprintf("R_%d", r.id),
		"name":           r.name,
		"full_name":      r.fullName(),
		"owner":          obj{"login": r.owner, "id": loginID(r.owner), "type": "Organization"},
		"private":        false,
		"html_url":       "https://github.com/" + r.fullName(),
		"url":            s.apiURL("/repos/%s", r.fullName()),
		"default_branch": r.defaultBranch,
	}
}

func (s *Server) prJSON(r *repo, p *pull) obj {
	var mergeable, rebaseable any
	mergeableState := "unknown"
	if p.state == "open" && r.mergeabilityKnown(p) { // mergegate.go
		ok := s.mergeable(r, p)
		mergeable, rebaseable = ok, ok
		mergeableState = s.mergeableState(r, p, ok)
	}
	var mergeCommit, mergedBy any
	if p.merged {
		mergeCommit = p.mergeCommitSHA
		mergedBy = userJSON(p.mergedBy)
	}
	baseSHA := r.git.branchHead(p.baseRef)
	return obj{
		"id":               p.id,
		"node_id":          fmt.Sprintf("PR_%d", p.id),
		"number":           p.number,
		"url":              s.apiURL("/repos/%s/pulls/%d", r.fullName(), p.number),
		"html_url":         fmt.Sprintf("https://github.com/%s/pull/%d", r.fullName(), p.number),
		"state":            p.state,
		"locked":           false,
		"title":            p.title,
		"user":             userJSON(p.author),
		"body":             nil,
		"created_at":       ts(p.createdAt),
		"updated_at":       ts(p.updatedAt),
		"closed_at":        tsPtr(p.closedAt),
		"merged_at":        tsPtr(p.mergedAt),
		"merge_commit_sha": mergeCommit,
		"draft":            p.draft,
		"labels":           s.labelsJSON(r, r.x().labels[p.number]),
		"head": obj{
			"label": r.owner + ":" + p.headRef, "ref": p.headRef, "sha": p.headSHA,
			"user": userJSON(p.author), "repo": s.repoJSON(r),
		},
		"base": obj{
			"label": r.owner + ":" + p.baseRef, "ref": p.baseRef, "sha": baseSHA,
			"user": obj{"login": r.owner, "id": loginID(r.owner), "type": "Organization"}, "repo": s.repoJSON(r),
		},
		"merged":          p.merged,
		"mergeable":       mergeable,
		"rebaseable":      rebaseable,
		"mergeable_state": mergeableState,
		"merged_by":       mergedBy,
	}
}

func (s *Server) refJSON(r *repo, branch, sha string) obj {
	return obj{
		"ref":     "refs/heads/" + branch,
		"node_id": "REF_" + sha[:12],
		"url":     s.apiURL("/repos/%s/git/refs/heads/%s", r.fullName(), branch),
		"object": obj{
			"type": "commit",
			"sha":  sha,
			"url":  s.apiURL("/repos/%s/git/commits/%s", r.fullName(), sha),
		},
	}
}

func (s *Server) commitJSON(r *repo, c commitInfo, when time.Time) obj {
	parents := []obj{}
	for _, p := range c.Parents {
		parents = append(parents, obj{"sha": p, "url": s.apiURL("/repos/%s/commits/%s", r.fullName(), p)})
	}
	person := obj{"name": c.AuthorName, "email": c.AuthorEmail, "date": ts(when)}
	return obj{
		"sha":      c.SHA,
		"node_id":  "C_" + c.SHA[:12],
		"url":      s.apiURL("/repos/%s/commits/%s", r.fullName(), c.SHA),
		"html_url": fmt.Sprintf("https://github.com/%s/commit/%s", r.fullName(), c.SHA),
		"commit": obj{
			"author":        person,
			"committer":     person,
			"message":       c.Message,
			"tree":          obj{"sha": c.Tree, "url": s.apiURL("/repos/%s/git/trees/%s", r.fullName(), c.Tree)},
			"url":           s.apiURL("/repos/%s/git/commits/%s", r.fullName(), c.SHA),
			"comment_count": 0,
		},
		"parents": parents,
	}
}

func (s *Server) statusJSON(r *repo, st *status) obj {
	var target, desc any
	if st.url != "" {
		target = st.url
	}
	if st.description != "" {
		desc = st.description
	}
	return obj{
		"url":         s.apiURL("/repos/%s/statuses/%s", r.fullName(), st.sha),
		"id":          st.id,
		"node_id":     fmt.Sprintf("SC_%d", st.id),
		"state":       st.state,
		"description": desc,
		"target_url":  target,
		"context":     st.context,
		"created_at":  ts(st.createdAt),
		"updated_at":  ts(st.updatedAt),
		"creator":     userJSON(st.by.login),
	}
}

func (s *Server) checkRunJSON(r *repo, c *checkRun) obj {
	var conclusion any
	if c.conclusion != "" {
		conclusion = c.conclusion
	}
	// GitHub fills details_url with the App's homepage when the run names
	// none: it is never null.
	details := c.detailsURL
	if details == "" {
		details = s.appJSON(c.appID)["external_url"].(string)
	}
	output := obj{"title": nil, "summary": nil, "text": nil, "annotations_count": 0}
	if c.title != "" { // made through the REST API with an output
		output["title"], output["summary"] = c.title, c.summary
	}
	return obj{
		"id":            c.id,
		"node_id":       fmt.Sprintf("CR_%d", c.id),
		"head_sha":      c.sha,
		"external_id":   c.externalID,
		"url":           s.apiURL("/repos/%s/check-runs/%d", r.fullName(), c.id),
		"html_url":      fmt.Sprintf("https://github.com/%s/runs/%d", r.fullName(), c.id),
		"details_url":   details,
		"status":        c.status,
		"conclusion":    conclusion,
		"started_at":    ts(c.startedAt),
		"completed_at":  tsPtr(c.completedAt),
		"name":          c.name,
		"output":        output,
		"check_suite":   obj{"id": checkSuiteID(c.sha, c.appID)},
		"app":           s.appJSON(c.appID),
		"pull_requests": []obj{},
	}
}

// errorJSON is GitHub's error body.
func errorJSON(message, doc string) obj {
	if doc == "" {
		doc = "https://docs.github.com/rest"
	}
	return obj{"message": message, "documentation_url": doc}
}
