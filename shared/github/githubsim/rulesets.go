package githubsim

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
)

// Required status checks come from two places on GitHub, and a merge must
// satisfy both: classic branch protection (one per branch) and rulesets
// (any number, of the repository or of its organization, each matching
// branches by name). The REST API shows them apart: GET
// /repos/{o}/{r}/branches/{b} (protection.required_status_checks) and
// GET /repos/{o}/{r}/rules/branches/{b} (every active rule that applies,
// organization rulesets included).

// RequiredCheck is one status check a branch requires: a commit status
// context or check run name, and the GitHub App that must provide it (0:
// any App, or none).
type RequiredCheck struct {
	Context string
	AppID   int64
}

// Protection is classic branch protection's required status checks.
type Protection struct {
	Checks []RequiredCheck
	// Strict requires a pull request's head to contain its base branch's
	// head ("Require branches to be up to date before merging").
	Strict bool
}

// Ruleset is a branch ruleset holding a required_status_checks rule.
type Ruleset struct {
	Name string
	// Enforcement is active (the default), evaluate or disabled; only
	// active rulesets apply (GitHub: evaluate only reports).
	Enforcement string
	// Include and Exclude are the ref_name condition: "~DEFAULT_BRANCH",
	// "~ALL", or refs/heads/ patterns (path.Match syntax). Include
	// defaults to the default branch.
	Include, Exclude []string
	// Checks and Strict are the required_status_checks rule's
	// required_status_checks and strict_required_status_checks_policy; no
	// Checks, no such rule.
	Checks []RequiredCheck
	Strict bool
	// NoDeletion adds a deletion rule: matching branches cannot be deleted.
	NoDeletion bool
}

type ruleset struct {
	Ruleset
	id     int64
	source string // "owner/name" or the organization
	org    bool
}

// SetBranchProtection sets branch's classic protection; nil removes it.
func (s *Server) SetBranchProtection(full, branch string, p *Protection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	if p == nil {
		delete(r.protection, branch)
		return nil
	}
	c := *p
	c.Checks = slices.Clone(p.Checks)
	r.protection[branch] = &c
	return nil
}

// AddRuleset adds a repository ruleset and returns its id.
func (s *Server) AddRuleset(full string, rs Ruleset) (int64, error) {
	if err := rs.check(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return 0, err
	}
	x := &ruleset{Ruleset: rs.clone(), id: s.id(), source: r.fullName()}
	r.rulesets = append(r.rulesets, x)
	return x.id, nil
}

// AddOrgRuleset adds a ruleset of organization org, applying to each of
// its repositories, and returns its id.
func (s *Server) AddOrgRuleset(org string, rs Ruleset) (int64, error) {
	if err := rs.check(); err != nil {
		return 0, err
	}
	if org == "" || strings.Contains(org, "/") {
		return 0, fmt.Errorf("githubsim: %q is not an organization", org)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := &ruleset{Ruleset: rs.clone(), id: s.id(), source: org, org: true}
	k := strings.ToLower(org)
	s.strict.orgRulesets[k] = append(s.strict.orgRulesets[k], x)
	return x.id, nil
}

// DeleteRuleset removes a repository or organization ruleset.
func (s *Server) DeleteRuleset(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	drop := func(l []*ruleset) ([]*ruleset, bool) {
		i := slices.IndexFunc(l, func(x *ruleset) bool { return x.id == id })
		if i < 0 {
			return l, false
		}
		return slices.Delete(l, i, i+1), true
	}
	var ok bool
	for _, r := range s.repos {
		if r.rulesets, ok = drop(r.rulesets); ok {
			return nil
		}
	}
	for k, l := range s.strict.orgRulesets {
		if s.strict.orgRulesets[k], ok = drop(l); ok {
			return nil
		}
	}
	return fmt.Errorf("githubsim: no ruleset %d", id)
}

func (rs Ruleset) check() error {
	switch rs.Enforcement {
	case "", "active", "evaluate", "disabled":
	default:
		return fmt.Errorf("githubsim: enforcement %q is not active, evaluate or disabled", rs.Enforcement)
	}
	for _, c := range rs.Checks {
		if c.Context == "" {
			return errors.New("githubsim: a required status check needs a context")
		}
	}
	for _, p := range append(slices.Clone(rs.Include), rs.Exclude...) {
		if p != "~ALL" && p != "~DEFAULT_BRANCH" && !strings.HasPrefix(p, "refs/heads/") {
			return fmt.Errorf("githubsim: ref pattern %q is not ~ALL, ~DEFAULT_BRANCH or refs/heads/…", p)
		}
	}
	return nil
}

func (rs Ruleset) clone() Ruleset {
	rs.Include, rs.Exclude, rs.Checks = slices.Clone(rs.Include), slices.Clone(rs.Exclude), slices.Clone(rs.Checks)
	return rs
}

// applies reports whether an active ruleset targets branch of r.
func (x *ruleset) applies(r *repo, branch string) bool {
	if x.Enforcement != "" && x.Enforcement != "active" {
		return false
	}
	include := x.Include
	if len(include) == 0 {
		include = []string{"~DEFAULT_BRANCH"}
	}
	match := func(p string) bool {
		switch p {
		case "~ALL":
			return true
		case "~DEFAULT_BRANCH":
			return branch == r.defaultBranch
		}
		ok, _ := path.Match(p, "refs/heads/"+branch)
		return ok
	}
	return slices.ContainsFunc(include, match) && !slices.ContainsFunc(x.Exclude, match)
}

// rulesetsFor lists the active rulesets that apply to branch of r: the
// repository's, then its organization's.
func (s *Server) rulesetsFor(r *repo, branch string) []*ruleset {
	var out []*ruleset
	for _, x := range append(slices.Clone(r.rulesets), s.strict.orgRulesets[strings.ToLower(r.owner)]...) {
		if x.applies(r, branch) {
			out = append(out, x)
		}
	}
	return out
}

// getBranchRules answers GET /repos/{o}/{r}/rules/branches/{branch}: every
// rule of the active rulesets that apply, whether or not the branch exists,
// paginated.
func (s *Server) getBranchRules(w http.ResponseWriter, r *http.Request, rp *repo, branch string) {
	var rules []obj
	for _, x := range s.rulesetsFor(rp, branch) {
		source := "Repository"
		if x.org {
			source = "Organization"
		}
		rule := func(typ string, params obj) obj {
			o := obj{"type": typ, "ruleset_source_type": source, "ruleset_source": x.source, "ruleset_id": x.id}
			if params != nil {
				o["parameters"] = params
			}
			return o
		}
		if x.NoDeletion {
			rules = append(rules, rule("deletion", nil))
		}
		if len(x.Checks) > 0 {
			checks := []obj{}
			for _, c := range x.Checks {
				o := obj{"context": c.Context}
				if c.AppID != 0 {
					o["integration_id"] = c.AppID
				}
				checks = append(checks, o)
			}
			rules = append(rules, rule("required_status_checks", obj{
				"strict_required_status_checks_policy": x.Strict,
				"do_not_enforce_on_create":             false,
				"required_status_checks":               checks,
			}))
		}
	}
	lo, hi := page(w, r, len(rules))
	writeJSON(w, 200, append([]obj{}, rules[lo:hi]...))
}

// protectionSummary is the "protection" object of GET branch: what anyone
// who can read the repository sees of classic protection.
func (s *Server) protectionSummary(rp *repo, branch string) obj {
	p := rp.protection[branch]
	if p == nil {
		return obj{"enabled": false, "required_status_checks": obj{"enforcement_level": "off", "contexts": []string{}, "checks": []obj{}}}
	}
	contexts, checks := requiredJSON(p.Checks)
	return obj{"enabled": true, "required_status_checks": obj{"enforcement_level": "non_admins", "contexts": contexts, "checks": checks}}
}

// requiredJSON renders required checks as classic protection does:
// contexts, and checks with their app_id (null: any App).
func requiredJSON(cs []RequiredCheck) ([]string, []obj) {
	contexts, checks := []string{}, []obj{}
	for _, c := range cs {
		var app any
		if c.AppID != 0 {
			app = c.AppID
		}
		contexts = append(contexts, c.Context)
		checks = append(checks, obj{"context": c.Context, "app_id": app})
	}
	return contexts, checks
}

// msgRulesetDeletion is GitHub's refusal to delete a branch a ruleset
// protects from deletion.
const msgRulesetDeletion = "Repository rule violations found\n\nCannot delete this branch\n\n"

// deletionForbidden reports whether a ruleset forbids deleting branch.
func (s *Server) deletionForbidden(rp *repo, branch string) bool {
	return slices.ContainsFunc(s.rulesetsFor(rp, branch), func(x *ruleset) bool { return x.NoDeletion })
}
