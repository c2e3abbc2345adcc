package githubsim

import (
	"errors"
	"fmt"
	"strings"
)

// The operations here are shared by the REST handlers and the control API.
// Callers hold s.mu.

// branchMoved records that branch went from before to after ("" for absent):
// open pull requests with that head follow it (synchronize), and a push event
// is delivered, as GitHub does for every ref update.
func (s *Server) branchMoved(r *repo, branch, before, after, pusher string) {
	if after != "" {
		for _, p := range r.sortedPulls() {
			if p.state == "open" && p.headRef == branch && p.headSHA != after {
				p.headSHA, p.updatedAt = after, s.now().UTC()
				s.emitPull(r, p, "synchronize", nil)
			}
		}
	}
	s.emitPush(r, branch, before, after, pusher)
}

// mergeable reports whether a pull request's head merges cleanly into its base.
func (s *Server) mergeable(r *repo, p *pull) bool {
	base := r.git.branchHead(p.baseRef)
	if base == "" {
		return false
	}
	_, err := r.git.mergeTree(base, p.headSHA)
	return err == nil
}

func (s *Server) addStatus(r *repo, sha, context, state, description, targetURL string, by actor) (*status, error) {
	if r.git.resolve(sha) != sha {
		return nil, fmt.Errorf("githubsim: no commit %q", sha)
	}
	switch state {
	case "error", "failure", "pending", "success":
	default:
		return nil, fmt.Errorf("githubsim: bad status state %q", state)
	}
	if context == "" {
		context = "default"
	}
	now := s.now().UTC()
	st := &status{id: s.id(), sha: sha, context: context, state: state, description: description, url: targetURL, createdAt: now, updatedAt: now, by: by}
	r.statuses[sha] = append(r.statuses[sha], st)
	s.emitStatus(r, st)
	return st, nil
}

// latestStatuses keeps the newest status of each context, in the order the
// contexts first appeared, as the combined status does.
func latestStatuses(all []*status) []*status {
	idx := map[string]int{}
	var out []*status
	for _, st := range all {
		if i, ok := idx[st.context]; ok {
			out[i] = st
			continue
		}
		idx[st.context] = len(out)
		out = append(out, st)
	}
	return out
}

// combinedState is GitHub's rule: failure if any context errored or failed,
// pending if any is pending or there is none, else success.
func combinedState(sts []*status) string {
	if len(sts) == 0 {
		return "pending"
	}
	state := "success"
	for _, st := range sts {
		switch st.state {
		case "error", "failure":
			return "failure"
		case "pending":
			state = "pending"
		}
	}
	return state
}

type mergeRequest struct {
	method      string
	sha         string // required head sha, "" for any
	title, body string
	by          string
}

type mergeResult struct {
	status  int
	message string
	sha     string
}

// Messages GitHub answers PUT /pulls/{n}/merge with.
const (
	msgNotMergeable = "Pull Request is not mergeable"
	msgHeadModified = "Head branch was modified. Review and try the merge again."
	msgMerged       = "Pull Request successfully merged"
)

// mergePull merges a pull request into its base branch with a real commit:
// a merge commit (parents base and head), a squash (one commit, parent
// base) or a rebase (each commit of the pull request replayed on base).
func (s *Server) mergePull(r *repo, p *pull, req mergeRequest) mergeResult {
	if p.state != "open" {
		return mergeResult{status: 405, message: msgNotMergeable}
	}
	if p.draft {
		return mergeResult{status: 405, message: "Pull Request is still a draft"}
	}
	if req.sha != "" && req.sha != p.headSHA {
		return mergeResult{status: 409, message: msgHeadModified}
	}
	if req.method == "" {
		req.method = MethodMerge
	}
	base := r.git.branchHead(p.baseRef)
	if base == "" {
		return mergeResult{status: 405, message: msgNotMergeable}
	}
	sig := s.sig(req.by)
	var sha string
	var err error
	switch req.method {
	case MethodMerge:
		sha, err = s.mergeCommit(r, p, base, req, sig)
	case MethodSquash:
		sha, err = s.squashCommit(r, p, base, req, sig)
	case MethodRebase:
		sha, err = s.rebaseCommits(r, p, base, sig)
	default:
		return mergeResult{status: 422, message: "Invalid request.\n\nmerge_method is not a valid value."}
	}
	if errors.Is(err, errConflict) {
		return mergeResult{status: 405, message: msgNotMergeable}
	}
	if err != nil {
		return mergeResult{status: 500, message: "Server Error"}
	}
	if err := r.git.setRef(p.baseRef, sha); err != nil {
		return mergeResult{status: 500, message: "Server Error"}
	}
	now := s.now().UTC()
	p.state, p.merged, p.mergeCommitSHA, p.mergedBy = "closed", true, sha, req.by
	p.mergedAt, p.closedAt, p.updatedAt = &now, &now, now
	s.emitPull(r, p, "closed", nil)
	s.branchMoved(r, p.baseRef, base, sha, req.by)
	return mergeResult{status: 200, message: msgMerged, sha: sha}
}

func (s *Server) mergeCommit(r *repo, p *pull, base string, req mergeRequest, sig signature) (string, error) {
	tree, err := r.git.mergeTree(base, p.headSHA)
	if err != nil {
		return "", err
	}
	title := req.title
	if title == "" {
		title = fmt.Sprintf("Merge pull request #%d from %s/%s", p.number, r.owner, p.headRef)
	}
	body := req.body
	if body == "" {
		body = p.title
	}
	return r.git.commitTree(tree, []string{base, p.headSHA}, title+"\n\n"+body, sig)
}

func (s *Server) squashCommit(r *repo, p *pull, base string, req mergeRequest, sig signature) (string, error) {
	tree, err := r.git.mergeTree(base, p.headSHA)
	if err != nil {
		return "", err
	}
	title := req.title
	if title == "" {
		title = fmt.Sprintf("%s (#%d)", p.title, p.number)
	}
	body := req.body
	if body == "" {
		cs, err := r.git.between(base, p.headSHA)
		if err != nil {
			return "", err
		}
		var lines []string
		for _, c := range cs {
			lines = append(lines, "* "+c.Subject)
		}
		body = strings.Join(lines, "\n")
	}
	msg := title
	if body != "" {
		msg += "\n\n" + body
	}
	return r.git.commitTree(tree, []string{base}, msg, sig)
}

func (s *Server) rebaseCommits(r *repo, p *pull, base string, sig signature) (string, error) {
	cs, err := r.git.between(base, p.headSHA)
	if err != nil {
		return "", err
	}
	cur := base
	for _, c := range cs {
		tree, err := r.git.cherryPick(cur, c, sig)
		if err != nil {
			return "", err
		}
		author := signature{name: c.AuthorName, email: c.AuthorEmail, when: sig.when}
		cur, err = r.git.commitTree(tree, []string{cur}, c.Message, author)
		if err != nil {
			return "", err
		}
	}
	return cur, nil
}

// mergeBranches is POST /merges: merge head (branch or sha) into the base
// branch with a merge commit. 204 when head is already contained in base.
func (s *Server) mergeBranches(r *repo, base, head, message, by string) (int, string, commitInfo) {
	baseSHA := r.git.branchHead(base)
	if baseSHA == "" {
		return 404, "Base does not exist", commitInfo{}
	}
	headSHA := r.git.resolve(head)
	if headSHA == "" {
		return 404, "Head does not exist", commitInfo{}
	}
	if in, err := r.git.isAncestor(headSHA, baseSHA); err != nil {
		return 500, "Server Error", commitInfo{}
	} else if in {
		return 204, "", commitInfo{}
	}
	tree, err := r.git.mergeTree(baseSHA, headSHA)
	if errors.Is(err, errConflict) {
		return 409, "Merge conflict", commitInfo{}
	}
	if err != nil {
		return 500, "Server Error", commitInfo{}
	}
	if message == "" {
		message = fmt.Sprintf("Merge %s into %s", head, base)
	}
	sha, err := r.git.commitTree(tree, []string{baseSHA, headSHA}, message, s.sig(by))
	if err != nil {
		return 500, "Server Error", commitInfo{}
	}
	if err := r.git.setRef(base, sha); err != nil {
		return 500, "Server Error", commitInfo{}
	}
	s.branchMoved(r, base, baseSHA, sha, by)
	c, err := r.git.commit(sha)
	if err != nil {
		return 500, "Server Error", commitInfo{}
	}
	return 201, "", c
}
