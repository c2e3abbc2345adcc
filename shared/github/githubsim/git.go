package githubsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// gitRepo is one bare repository driven through the git CLI. No work tree is
// ever checked out: commits are built from blobs, a throwaway index file and
// commit-tree, merges come from merge-tree --write-tree, so every merge and
// every conflict is git's own.
type gitRepo struct {
	dir     string
	cache   gitCache     // what git already answered (gitcache.go)
	refw    refWriter    // the branch writes' git (refwriter.go), under cache.mu
	objects objectReader // the object reads' git (objects.go)
	started atomic.Int64 // git processes run, which the cache's test counts
}

// errConflict is a real content conflict reported by git merge-tree.
var errConflict = errors.New("merge conflict")

// signature is who and when a commit is made by; the time comes from the
// server's clock so histories are reproducible.
type signature struct {
	name, email string
	when        time.Time
}

func (g *gitRepo) run(stdin []byte, env []string, args ...string) (string, error) {
	out, code, err := g.runCode(stdin, env, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", exitError(args, code, out)
	}
	return strings.TrimSpace(out), nil
}

// gitPath is where git is, looked up in PATH once rather than by every
// command (a visible share of a queue test's CPU); "git" when it is not
// found, for exec to report.
var gitPath = sync.OnceValue(func() string {
	if p, err := exec.LookPath("git"); err == nil {
		return p
	}
	return "git"
})

// exitError is a git command's failure, with what git said.
func exitError(args []string, code int, out string) error {
	return fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(out))
}

// runCode runs git and returns its exit code instead of failing on a non-zero
// one, for the commands (merge-tree, merge-base) whose exit code is an answer.
func (g *gitRepo) runCode(stdin []byte, env []string, args ...string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := g.command(ctx, env, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode(), nil
	}
	if err != nil {
		return "", -1, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), 0, nil
}

// gitTimeout bounds one git command: a guard against a hang, not a speed
// requirement.
const gitTimeout = 30 * time.Second

// command is git with args on this repository, counted in started.
func (g *gitRepo) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	g.started.Add(1)
	cmd := exec.CommandContext(ctx, gitPath(), args...)
	cmd.Dir = g.dir
	// Isolate from the user's and the system's configuration: hooks, signing
	// or a default branch name set there must not change what the sim does.
	cmd.Env = append(os.Environ(),
		"GIT_DIR="+g.dir,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func initBare(dir, defaultBranch string) (*gitRepo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	g := &gitRepo{dir: dir}
	if _, err := g.run(nil, nil, "init", "--bare", "--quiet", "--initial-branch="+defaultBranch, dir); err != nil {
		return nil, err
	}
	return g, nil
}

func sigEnv(s signature) []string {
	date := fmt.Sprintf("%d +0000", s.when.Unix())
	return []string{
		"GIT_AUTHOR_NAME=" + s.name, "GIT_AUTHOR_EMAIL=" + s.email, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + s.name, "GIT_COMMITTER_EMAIL=" + s.email, "GIT_COMMITTER_DATE=" + date,
	}
}

// resolve returns the commit sha of a branch name or a sha, or "" when there
// is no such commit.
func (g *gitRepo) resolve(rev string) string {
	if rev == "" {
		return ""
	}
	arg := rev
	if !isSHA(rev) {
		head, ok := g.tableHead(rev)
		if !ok {
			arg = "refs/heads/" + rev // git reads the name itself
		} else if head == "" {
			return ""
		} else {
			// refs/heads/rev^{commit} is head^{commit} while the table
			// holds head for rev.
			arg = head
		}
	}
	if isSHA(arg) {
		obj, found, err := g.objects.read(g, arg+"^{commit}")
		if err != nil || !found {
			return ""
		}
		return obj.sha
	}
	out, code, err := g.runCode(nil, nil, "rev-parse", "--verify", "--quiet", arg+"^{commit}")
	if err != nil || code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// branchHead is the sha a branch points at, "" when the branch is absent.
func (g *gitRepo) branchHead(branch string) string {
	if sha, ok := g.tableHead(branch); ok {
		return sha
	}
	out, code, err := g.runCode(nil, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil || code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

// setRef points refs/heads/branch at sha. Callers check the current value
// first, under the server lock, which makes check and update atomic.
func (g *gitRepo) setRef(branch, sha string) error {
	return g.updateRef(branch, sha, "update refs/heads/"+branch+" "+sha)
}

func (g *gitRepo) deleteRef(branch string) error {
	return g.updateRef(branch, "", "delete refs/heads/"+branch)
}

// branches lists the branch names, sorted as for-each-ref sorts them.
func (g *gitRepo) branches() ([]string, error) {
	return g.tableBranches()
}

func (g *gitRepo) treeOf(commit string) (string, error) {
	if !isSHA(commit) {
		return g.run(nil, nil, "rev-parse", commit+"^{tree}")
	}
	obj, found, err := g.objects.read(g, commit+"^{tree}")
	if err == nil && !found {
		err = fmt.Errorf("git rev-parse %s^{tree}: no such tree", commit)
	}
	return obj.sha, err
}

// runAnswer is run for a question that depends on nothing but its
// arguments when fixed is true (every revision in them a full sha): git's
// answer is then remembered.
func (g *gitRepo) runAnswer(fixed bool, args ...string) (string, error) {
	if !fixed {
		return g.run(nil, nil, args...)
	}
	out, code, err := g.runImmutable([]int{0}, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", exitError(args, code, out)
	}
	return strings.TrimSpace(out), nil
}

// runCodeAnswer is runCode for a question whose exit codes in keep are
// answers (merge-tree's conflict, merge-base's no): remembered as
// runAnswer's are when fixed.
func (g *gitRepo) runCodeAnswer(fixed bool, keep []int, args ...string) (string, int, error) {
	if !fixed {
		return g.runCode(nil, nil, args...)
	}
	return g.runImmutable(keep, args...)
}

func (g *gitRepo) commitTree(tree string, parents []string, message string, sig signature) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return g.run([]byte(message), sigEnv(sig), append(args, "-F", "-")...)
}

// writeFile returns the tree of base (a commit, or "" for none) with path set
// to content. A throwaway index file stands in for the work tree.
func (g *gitRepo) writeFile(base, path string, content []byte) (string, error) {
	blob, err := g.run(content, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	idx, err := os.CreateTemp("", "githubsim-index-*")
	if err != nil {
		return "", err
	}
	idxPath := idx.Name()
	idx.Close()
	os.Remove(idxPath) // git wants to create it itself
	defer os.Remove(idxPath)
	env := []string{"GIT_INDEX_FILE=" + idxPath}
	if base != "" {
		if _, err := g.run(nil, env, "read-tree", base); err != nil {
			return "", err
		}
	}
	if _, err := g.run(nil, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+filepath.ToSlash(path)); err != nil {
		return "", err
	}
	return g.run(nil, env, "write-tree")
}

// mergeTree merges two commits as git merge would, without a work tree, and
// returns the resulting tree, or errConflict.
func (g *gitRepo) mergeTree(ours, theirs string) (string, error) {
	out, code, err := g.runCodeAnswer(allSHAs(ours, theirs), []int{0, 1}, "merge-tree", "--write-tree", "--no-messages", "--name-only", ours, theirs)
	if err != nil {
		return "", err
	}
	switch code {
	case 0:
		return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]), nil
	case 1:
		return "", errConflict
	default:
		return "", fmt.Errorf("git merge-tree: exit %d: %s", code, strings.TrimSpace(out))
	}
}

// isAncestor reports whether a is reachable from b.
func (g *gitRepo) isAncestor(a, b string) (bool, error) {
	_, code, err := g.runCodeAnswer(allSHAs(a, b), []int{0, 1}, "merge-base", "--is-ancestor", a, b)
	if err != nil {
		return false, err
	}
	switch code {
	case 0:
		return true, nil
	case 1:
		return false, nil
	}
	return false, fmt.Errorf("git merge-base --is-ancestor: exit %d", code)
}

// mergeBase is the best common ancestor of two commits.
func (g *gitRepo) mergeBase(a, b string) (string, error) {
	return g.runAnswer(allSHAs(a, b), "merge-base", a, b)
}

// fileAt is the content of path in commit sha; ok is false when there is
// no such file.
func (g *gitRepo) fileAt(sha, path string) (content string, ok bool, err error) {
	if !isSHA(sha) {
		return "", false, nil // resolve found no commit
	}
	obj, found, err := g.objects.read(g, sha+":"+path)
	if err != nil || !found || obj.typ != "blob" {
		return "", false, err
	}
	return string(obj.content), true, nil
}

// count is how many commits are reachable from head but not from base.
func (g *gitRepo) count(head, base string) (int, error) {
	out, err := g.runAnswer(allSHAs(head, base), "rev-list", "--count", head, "^"+base)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// commitInfo is what the sim reads back from a commit.
type commitInfo struct {
	SHA, Tree, Subject, Message, AuthorName, AuthorEmail string
	Parents                                              []string
}

// commit reads commit sha, a full sha (every caller has one from git).
func (g *gitRepo) commit(sha string) (commitInfo, error) {
	if !isSHA(sha) {
		return commitInfo{}, fmt.Errorf("commit %q: not a full sha", sha)
	}
	obj, found, err := g.objects.read(g, sha)
	switch {
	case err != nil:
		return commitInfo{}, err
	case !found || obj.typ != "commit":
		return commitInfo{}, fmt.Errorf("commit %s: no such commit", sha)
	}
	return parseCommit(sha, obj.content)
}

// log lists commits from head, newest first, following first parents only so
// that a merge commit stands for the pull request it merged.
func (g *gitRepo) log(head string) ([]commitInfo, error) {
	out, err := g.runAnswer(allSHAs(head), "rev-list", "--first-parent", head)
	if err != nil {
		return nil, err
	}
	var cs []commitInfo
	for _, sha := range strings.Fields(out) {
		c, err := g.commit(sha)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// between lists the non-merge commits reachable from head but not from base,
// oldest first: the commits a rebase merge replays.
func (g *gitRepo) between(base, head string) ([]commitInfo, error) {
	out, err := g.runAnswer(allSHAs(base, head), "rev-list", "--reverse", "--no-merges", head, "^"+base)
	if err != nil {
		return nil, err
	}
	var cs []commitInfo
	for _, sha := range strings.Fields(out) {
		c, err := g.commit(sha)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// cherryPick applies commit c (one parent) on top of onto and returns the new
// tree. git 2.39's merge-tree has no --merge-base, so the merge base is forced
// by merging c with a synthetic commit that has onto's tree and c's parent as
// its only parent: their best common ancestor is then c's parent, and the
// three-way merge is exactly a cherry-pick, conflicts included.
func (g *gitRepo) cherryPick(onto string, c commitInfo, sig signature) (string, error) {
	if len(c.Parents) != 1 {
		return "", fmt.Errorf("cherry-pick of %s: %d parents", c.SHA, len(c.Parents))
	}
	ontoTree, err := g.treeOf(onto)
	if err != nil {
		return "", err
	}
	synthetic, err := g.commitTree(ontoTree, c.Parents, "githubsim: cherry-pick base", sig)
	if err != nil {
		return "", err
	}
	return g.mergeTree(synthetic, c.SHA)
}
