package githubsim

import (
	"fmt"
	"net/http"
)

// When GitHub lets a pull request merge, and what it says of its
// mergeability meanwhile.
//
// Mergeability is computed in the background after every change of the
// pull request's head or base: the first read after a push answers
// mergeable null (mergeable_state "unknown") and starts the computation,
// which here is done by the next read. So a client that trusts the first
// answer, or waits on the wall clock, is caught, while a test stays
// deterministic: it reads again.
//
// A merge through the REST API is refused (405) while a required status
// check — of classic branch protection or of any active ruleset, bound to
// its App when one is named — is missing, pending or failing on the head,
// or while the head is behind its base under a strict policy. A person's
// merge through the control API (MergePR) stands for an administrator's,
// who may bypass the rules, as GitHub's web UI allows.

// mergeKey is the head and base a pull request's mergeability depends on.
func (r *repo) mergeKey(p *pull) string {
	return p.headSHA + ":" + r.git.branchHead(p.baseRef)
}

// mergeabilityKnown reports whether GitHub has computed p's mergeability
// for its current head and base.
func (r *repo) mergeabilityKnown(p *pull) bool {
	return !p.mergeableUnknown && p.mergeableFor == r.mergeKey(p)
}

// computeMergeability finishes the background computation a read started:
// the next read sees the result. Callers hold s.mu.
func (s *Server) computeMergeability(r *repo, p *pull) {
	if p.state == "open" {
		p.mergeableFor = r.mergeKey(p)
	}
}

// The words GitHub uses for a required check that does not pass, and the
// messages of its 405.
const (
	checkExpected = "expected"
	checkPending  = "pending"
	checkFailing  = "failing"
	checkPassing  = "success"

	msgBehind = "Head branch is out of date. Review and try the merge again."
)

// requiredState is how required check c stands on sha: every commit status
// (the latest of its context) and check run of that name counts — from
// c's App only, when it names one — and all of them must pass.
func (r *repo) requiredState(sha string, c RequiredCheck) string {
	from := func(app int64) bool { return c.AppID == 0 || app == c.AppID }
	var words []string
	var latest *status
	for _, st := range r.statuses[sha] {
		if st.context == c.Context && from(st.by.appID) {
			latest = st
		}
	}
	if latest != nil {
		switch latest.state {
		case "success":
			words = append(words, checkPassing)
		case "pending":
			words = append(words, checkPending)
		default:
			words = append(words, checkFailing)
		}
	}
	for _, cr := range r.checks[sha] {
		if cr.name == c.Context && from(cr.appID) {
			words = append(words, checkRunWord(cr))
		}
	}
	if len(words) == 0 {
		return checkExpected
	}
	state := checkPassing
	for _, w := range words {
		switch {
		case w == checkFailing:
			return checkFailing
		case w == checkPending:
			state = checkPending
		}
	}
	return state
}

// checkRunWord is how a check run counts for a required check: neutral and
// skipped pass, as GitHub counts them.
func checkRunWord(c *checkRun) string {
	if c.status != "completed" {
		return checkPending
	}
	switch c.conclusion {
	case "success", "neutral", "skipped":
		return checkPassing
	case "stale":
		return checkPending
	}
	return checkFailing
}

// protectionVerdict judges p's head against what its base branch
// requires: "clean", "blocked" (a required check does not pass) or
// "behind" (strict, and the head lacks the base head), with GitHub's 405
// message. Callers hold s.mu.
func (s *Server) protectionVerdict(r *repo, p *pull) (verdict, message string) {
	strict := false
	if prot := r.protection[p.baseRef]; prot != nil {
		strict = prot.Strict
		for _, c := range prot.Checks {
			if st := r.requiredState(p.headSHA, c); st != checkPassing {
				return "blocked", fmt.Sprintf("Required status check %q is %s.", c.Context, st)
			}
		}
	}
	for _, x := range s.rulesetsFor(r, p.baseRef) {
		strict = strict || x.Strict && len(x.Checks) > 0
		for _, c := range x.Checks {
			if st := r.requiredState(p.headSHA, c); st != checkPassing {
				return "blocked", fmt.Sprintf("Repository rule violations found\n\nRequired status check %q is %s.\n\n", c.Context, st)
			}
		}
	}
	if strict {
		base := r.git.branchHead(p.baseRef)
		if in, err := r.git.isAncestor(base, p.headSHA); err != nil || !in {
			return "behind", msgBehind
		}
	}
	return "clean", ""
}

// mergeGate is what PUT /pulls/{n}/merge checks before merging an open,
// ready pull request at the expected head: 405 and GitHub's message when
// protection refuses, 0 to go on (mergePull answers the other refusals).
// Callers hold s.mu.
func (s *Server) mergeGate(r *repo, p *pull, sha string) (int, string) {
	if p.state != "open" || p.draft || (sha != "" && sha != p.headSHA) {
		return 0, ""
	}
	if v, msg := s.protectionVerdict(r, p); v != "clean" {
		return http.StatusMethodNotAllowed, msg
	}
	return 0, ""
}

// mergeableState is GitHub's mergeable_state of an open pull request whose
// mergeability is known: dirty (conflicts), draft, blocked, behind,
// unstable (a check that is not required does not pass) or clean.
func (s *Server) mergeableState(r *repo, p *pull, mergeable bool) string {
	switch {
	case !mergeable:
		return "dirty"
	case p.draft:
		return "draft"
	}
	if v, _ := s.protectionVerdict(r, p); v != "clean" {
		return v
	}
	for _, st := range latestStatuses(r.statuses[p.headSHA]) {
		if st.state != "success" {
			return "unstable"
		}
	}
	for _, c := range r.checks[p.headSHA] {
		if checkRunWord(c) != checkPassing {
			return "unstable"
		}
	}
	return "clean"
}
