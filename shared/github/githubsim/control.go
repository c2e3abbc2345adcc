package githubsim

import (
	"errors"
	"fmt"
	"strings"
)

// This file is the control API: what a test (or the local program) does to
// the simulated GitHub that a real user would do through git or the web UI.
// Repositories are named "owner/name". Every change that GitHub would
// announce is delivered as a webhook when one is configured.

// Commit is one entry of a branch's history.
type Commit struct {
	SHA     string
	Subject string
	Parents []string
}

// PullRequest is a snapshot of a simulated pull request.
type PullRequest struct {
	Number         int
	Title, Author  string
	HeadRef        string
	BaseRef        string
	HeadSHA        string
	State          string // open or closed
	Draft, Merged  bool
	MergeCommitSHA string
}

// Merge methods of the control API and of PUT .../merge.
const (
	MethodMerge  = "merge"
	MethodSquash = "squash"
	MethodRebase = "rebase"
)

// CreateRepo creates a repository whose default branch holds one initial
// commit (a README), and returns that commit's sha.
func (s *Server) CreateRepo(full, defaultBranch string) (string, error) {
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("githubsim: repository %q is not owner/name", full)
	}
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.repos[repoKey(full)] != nil {
		return "", fmt.Errorf("githubsim: repository %q exists", full)
	}
	g, err := initBare(s.repoDir(owner, name), defaultBranch)
	if err != nil {
		return "", err
	}
	tree, err := g.writeFile("", "README.md", []byte("# "+name+"\n"))
	if err != nil {
		return "", err
	}
	sha, err := g.commitTree(tree, nil, "Initial commit", s.sig(owner))
	if err != nil {
		return "", err
	}
	if err := g.setRef(defaultBranch, sha); err != nil {
		return "", err
	}
	s.repos[repoKey(full)] = &repo{
		id: s.id(), owner: owner, name: name, defaultBranch: defaultBranch, git: g,
		pulls: map[int]*pull{}, statuses: map[string][]*status{}, checks: map[string][]*checkRun{},
		protection: map[string]*Protection{},
	}
	return sha, nil
}

// CreateBranch creates branch at from (a branch name or a sha).
func (s *Server) CreateBranch(full, branch, from string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return "", err
	}
	if r.git.branchHead(branch) != "" {
		return "", fmt.Errorf("githubsim: branch %q exists", branch)
	}
	sha := r.git.resolve(from)
	if sha == "" {
		return "", fmt.Errorf("githubsim: no commit %q", from)
	}
	if err := r.git.setRef(branch, sha); err != nil {
		return "", err
	}
	s.branchMoved(r, branch, "", sha, r.owner)
	return sha, nil
}

// CommitFile commits path = content on branch (created from the default
// branch when absent) and returns the new head sha. Pushing to a pull
// request's head branch this way changes its head (a synchronize event).
func (s *Server) CommitFile(full, branch, path, content, message string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return "", err
	}
	parent := r.git.branchHead(branch)
	base := parent
	if base == "" {
		base = r.git.branchHead(r.defaultBranch)
	}
	tree, err := r.git.writeFile(base, path, []byte(content))
	if err != nil {
		return "", err
	}
	sha, err := r.git.commitTree(tree, []string{base}, message, s.sig(r.owner))
	if err != nil {
		return "", err
	}
	if err := r.git.setRef(branch, sha); err != nil {
		return "", err
	}
	s.branchMoved(r, branch, parent, sha, r.owner)
	return sha, nil
}

// OpenPR opens a pull request from head into base and returns its number.
func (s *Server) OpenPR(full, head, base, title, author string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return 0, err
	}
	headSHA := r.git.branchHead(head)
	if headSHA == "" || r.git.branchHead(base) == "" {
		return 0, fmt.Errorf("githubsim: head %q or base %q does not exist", head, base)
	}
	p := s.newPull(r, head, base, title, author)
	s.emitPull(r, p, "opened", nil)
	return p.number, nil
}

// PushPR commits a file change to a pull request's head branch.
func (s *Server) PushPR(full string, number int, path, content, message string) (string, error) {
	p, err := s.PR(full, number)
	if err != nil {
		return "", err
	}
	return s.CommitFile(full, p.HeadRef, path, content, message)
}

func (s *Server) withPull(full string, number int, fn func(r *repo, p *pull) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	p := r.pulls[number]
	if p == nil {
		return fmt.Errorf("githubsim: no pull request %s#%d", full, number)
	}
	return fn(r, p)
}

// ClosePR closes a pull request without merging it.
func (s *Server) ClosePR(full string, number int) error {
	return s.withPull(full, number, func(r *repo, p *pull) error {
		if p.state != "open" {
			return errors.New("githubsim: pull request is not open")
		}
		now := s.now().UTC()
		p.state, p.closedAt, p.updatedAt = "closed", &now, now
		s.emitPull(r, p, "closed", nil)
		return nil
	})
}

// ReopenPR reopens a closed, unmerged pull request.
func (s *Server) ReopenPR(full string, number int) error {
	return s.withPull(full, number, func(r *repo, p *pull) error {
		if p.state != "closed" || p.merged {
			return errors.New("githubsim: pull request is open or merged")
		}
		p.state, p.closedAt, p.updatedAt = "open", nil, s.now().UTC()
		if sha := r.git.branchHead(p.headRef); sha != "" {
			p.headSHA = sha
		}
		s.emitPull(r, p, "reopened", nil)
		return nil
	})
}

// ConvertToDraft marks an open pull request as a draft.
func (s *Server) ConvertToDraft(full string, number int) error {
	return s.withPull(full, number, func(r *repo, p *pull) error {
		p.draft, p.updatedAt = true, s.now().UTC()
		s.emitPull(r, p, "converted_to_draft", nil)
		return nil
	})
}

// ReadyForReview takes a pull request out of draft.
func (s *Server) ReadyForReview(full string, number int) error {
	return s.withPull(full, number, func(r *repo, p *pull) error {
		p.draft, p.updatedAt = false, s.now().UTC()
		s.emitPull(r, p, "ready_for_review", nil)
		return nil
	})
}

// ChangeBase retargets a pull request to another base branch (an "edited"
// event whose changes name the old base).
func (s *Server) ChangeBase(full string, number int, base string) error {
	return s.withPull(full, number, func(r *repo, p *pull) error {
		if r.git.branchHead(base) == "" {
			return fmt.Errorf("githubsim: no branch %q", base)
		}
		old := p.baseRef
		oldSHA := r.git.branchHead(old)
		p.baseRef, p.updatedAt = base, s.now().UTC()
		s.emitPull(r, p, "edited", obj{"base": obj{"ref": obj{"from": old}, "sha": obj{"from": oldSHA}}})
		return nil
	})
}

// SetMergeableUnknown makes GET pull request answer mergeable: null, as
// GitHub does while it computes mergeability in the background.
func (s *Server) SetMergeableUnknown(full string, number int, unknown bool) error {
	return s.withPull(full, number, func(_ *repo, p *pull) error {
		p.mergeableUnknown = unknown
		return nil
	})
}

// MergePR merges a pull request as a person would in the web UI (method
// merge, squash or rebase) and returns the sha the base branch now has.
func (s *Server) MergePR(full string, number int, method string) (string, error) {
	var sha string
	err := s.withPull(full, number, func(r *repo, p *pull) error {
		res := s.mergePull(r, p, mergeRequest{method: method, by: p.author})
		if res.status != 200 {
			return fmt.Errorf("githubsim: merge: %d %s", res.status, res.message)
		}
		sha = res.sha
		return nil
	})
	return sha, err
}

// PR returns a snapshot of a pull request.
func (s *Server) PR(full string, number int) (PullRequest, error) {
	var out PullRequest
	err := s.withPull(full, number, func(_ *repo, p *pull) error {
		out = PullRequest{
			Number: p.number, Title: p.title, Author: p.author, HeadRef: p.headRef, BaseRef: p.baseRef,
			HeadSHA: p.headSHA, State: p.state, Draft: p.draft, Merged: p.merged, MergeCommitSHA: p.mergeCommitSHA,
		}
		return nil
	})
	return out, err
}

// SetStatus creates a commit status on sha (state error, failure, pending or
// success), as a CI system would: as the CI App (CIAppID).
func (s *Server) SetStatus(full, sha, context, state, description, targetURL string) error {
	return s.SetStatusFrom(CIAppID, full, sha, context, state, description, targetURL)
}

// SetStatusFrom creates a commit status as App app (one AddApp made known,
// or CIAppID), created by its bot user.
func (s *Server) SetStatusFrom(app int64, full, sha, context, state, description, targetURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	slug := s.appSlug(app)
	if slug == "" {
		return fmt.Errorf("githubsim: no App %d", app)
	}
	_, err = s.addStatus(r, sha, context, state, description, targetURL, actor{login: slug + "[bot]", appID: app})
	return err
}

// SetCheckRun creates or updates (by name, on the same sha) a check run of
// the CI App (CIAppID). status is queued, in_progress or completed;
// conclusion is set when completed (success, failure, neutral, cancelled,
// skipped, timed_out, action_required).
func (s *Server) SetCheckRun(full, sha, name, status, conclusion, detailsURL string) error {
	return s.SetCheckRunFrom(CIAppID, full, sha, name, status, conclusion, detailsURL)
}

// SetCheckRunFrom is SetCheckRun as App app: a check run of the same name
// from another App is another check run.
func (s *Server) SetCheckRunFrom(app int64, full, sha, name, status, conclusion, detailsURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return err
	}
	if s.appSlug(app) == "" {
		return fmt.Errorf("githubsim: no App %d", app)
	}
	if r.git.resolve(sha) != sha {
		return fmt.Errorf("githubsim: no commit %q", sha)
	}
	switch status {
	case "queued", "in_progress", "completed":
	default:
		return fmt.Errorf("githubsim: bad check run status %q", status)
	}
	if (status == "completed") != (conclusion != "") {
		return errors.New("githubsim: a conclusion goes with status completed, and only then")
	}
	now := s.now().UTC()
	var c *checkRun
	for _, x := range r.checks[sha] {
		if x.name == name && x.appID == app {
			c = x
		}
	}
	action := "created"
	if c == nil {
		c = &checkRun{id: s.id(), sha: sha, name: name, startedAt: now, appID: app}
		r.checks[sha] = append(r.checks[sha], c)
	}
	c.status, c.conclusion, c.detailsURL = status, conclusion, detailsURL
	if status == "completed" {
		c.completedAt = &now
		action = "completed"
	}
	s.emitCheckRun(r, c, action)
	s.checkSuiteChanged(r, sha, app) // checksuites.go
	return nil
}

// SetRequiredStatusChecks protects branch with the given required contexts
// (from any App, branch not required to be up to date); nil removes the
// protection. SetBranchProtection says more.
func (s *Server) SetRequiredStatusChecks(full, branch string, contexts []string) error {
	if contexts == nil {
		return s.SetBranchProtection(full, branch, nil)
	}
	p := &Protection{Checks: []RequiredCheck{}}
	for _, c := range contexts {
		p.Checks = append(p.Checks, RequiredCheck{Context: c})
	}
	return s.SetBranchProtection(full, branch, p)
}

// History lists a branch's commits, newest first, along first parents.
func (s *Server) History(full, branch string) ([]Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return nil, err
	}
	head := r.git.branchHead(branch)
	if head == "" {
		return nil, fmt.Errorf("githubsim: no branch %q", branch)
	}
	cs, err := r.git.log(head)
	if err != nil {
		return nil, err
	}
	out := make([]Commit, len(cs))
	for i, c := range cs {
		out[i] = Commit{SHA: c.SHA, Subject: c.Subject, Parents: c.Parents}
	}
	return out, nil
}

// BranchHead returns the sha a branch points at, "" when it does not exist.
func (s *Server) BranchHead(full, branch string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return "", err
	}
	return r.git.branchHead(branch), nil
}

// Branches lists a repository's branch names, sorted.
func (s *Server) Branches(full string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return nil, err
	}
	return r.git.branches()
}

// FileAt returns the content of path at rev (a branch or a sha).
func (s *Server) FileAt(full, rev, path string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(full)
	if err != nil {
		return "", err
	}
	sha := r.git.resolve(rev)
	if sha == "" {
		return "", fmt.Errorf("githubsim: no commit %q", rev)
	}
	out, ok, err := r.git.fileAt(sha, path)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("githubsim: no file %q at %s", path, rev)
	}
	return out, nil
}
