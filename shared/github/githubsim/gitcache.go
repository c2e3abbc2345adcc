package githubsim

import (
	"sort"
	"strings"
	"sync"
)

// gitCache lets a gitRepo answer from memory what git already told it, so
// that a test driving a queue tick by tick does not start a git process for
// every question (a process per question was most of a queue test's CPU).
// git stays the one source of truth: nothing here computes an answer, it
// only remembers one.
//
//   - Branch heads: a table loaded once from git for-each-ref and then kept
//     by the sim's own ref writes (setRef, deleteRef), the only writers of
//     the repository's refs: the sim serves no push endpoint and runs no
//     other update-ref.
//   - Answers that depend only on object ids (merge-tree, merge-base,
//     rev-list between two shas): objects never change, so git's output
//     for the same arguments is the same for ever. Only full 40-hex shas
//     qualify; a branch name can move. (A commit, its tree and a file at a
//     sha are read from the repository's git cat-file, objects.go.)
//
// It has its own lock because some readers do not hold the server's.
type gitCache struct {
	mu      sync.Mutex
	refs    map[string]string // branch → sha; nil until loaded from git
	answers map[string]gitAnswer
	size    int // bytes of keys and outputs in answers
}

// gitAnswer is one remembered git run: its output and exit code.
type gitAnswer struct {
	out  string
	code int
}

// maxCacheBytes bounds the remembered outputs. A test server lives for one
// test and stays far below it; the local program's long-lived server just
// starts remembering afresh when it is reached.
const maxCacheBytes = 32 << 20

// runImmutable is runCode for a question whose answer depends only on
// immutable objects named by full shas: an exit code in keep is remembered
// and the same question is answered from memory afterwards. Other codes
// (a missing object, a failure) are not remembered, since the object may
// yet be written.
func (g *gitRepo) runImmutable(keep []int, args ...string) (string, int, error) {
	key := strings.Join(args, "\x00")
	c := &g.cache
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok {
		return a.out, a.code, nil
	}
	out, code, err := g.runCode(nil, nil, args...)
	if err != nil {
		return out, code, err
	}
	for _, k := range keep {
		if code == k {
			c.remember(key, gitAnswer{out: out, code: code})
			break
		}
	}
	return out, code, nil
}

func (c *gitCache) remember(key string, a gitAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.answers[key]; ok {
		return
	}
	n := len(key) + len(a.out)
	if c.answers == nil || c.size+n > maxCacheBytes {
		c.answers, c.size = map[string]gitAnswer{}, 0
	}
	c.answers[key] = a
	c.size += n
}

// allSHAs reports whether every revision is a full sha, so that an answer
// about them can never change.
func allSHAs(revs ...string) bool {
	for _, r := range revs {
		if !isSHA(r) {
			return false
		}
	}
	return true
}

// loadRefs fills the branch table from git once. Callers hold c.mu.
func (g *gitRepo) loadRefs() error {
	if g.cache.refs != nil {
		return nil
	}
	out, err := g.run(nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/")
	if err != nil {
		return err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		refs[strings.TrimPrefix(name, "refs/heads/")] = sha
	}
	g.cache.refs = refs
	return nil
}

// tableHead answers branchHead from the table. ok is false when the table
// cannot answer: git's own answer is then needed.
func (g *gitRepo) tableHead(branch string) (sha string, ok bool) {
	if !plainBranch(branch) {
		return "", false
	}
	c := &g.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := g.loadRefs(); err != nil {
		return "", false
	}
	return c.refs[branch], true
}

// tableBranches lists the table's branch names in for-each-ref's order
// (refname, byte-wise).
func (g *gitRepo) tableBranches() ([]string, error) {
	c := &g.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := g.loadRefs(); err != nil {
		return nil, err
	}
	if len(c.refs) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(c.refs))
	for b := range c.refs {
		names = append(names, b)
	}
	sort.Strings(names)
	return names, nil
}

// updateRef has git update-ref run command (refwriter.go) and records the
// result in the table: branch at sha, or absent when sha is "". The
// table's lock is held across git's write so that no reader sees the
// table and the repository disagree.
func (g *gitRepo) updateRef(branch, sha string, command string) error {
	c := &g.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	err := g.refw.write(g, command)
	switch {
	case c.refs == nil:
		// Not loaded yet: the load will read git's result.
	case err != nil || (sha != "" && !isSHA(sha)):
		// What git did (or stored for a name that is not a sha) is not
		// known here: read the table again from git when next asked.
		c.refs = nil
	case sha == "":
		delete(c.refs, branch)
	default:
		c.refs[branch] = sha
	}
	return err
}

// plainBranch reports whether refs/heads/<name> can only name that one ref
// when handed to git rev-parse: no revision syntax (~ ^ : @{ ..), no
// pattern or space, no empty component. For any other name the table does
// not answer and git is asked, as before there was a table.
func plainBranch(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") ||
		strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "/.") ||
		strings.HasPrefix(name, ".") {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_./+=,#%", r):
		default:
			return false
		}
	}
	return true
}
