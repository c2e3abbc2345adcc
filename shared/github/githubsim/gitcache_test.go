package githubsim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The cache's own tests: every answer a gitRepo gives from memory equals
// the one git gives a repository with nothing remembered, after each kind of
// ref change the sim makes, and while readers race a writer.

func cacheSim(t *testing.T) (*Server, *repo) {
	t.Helper()
	s, err := New(t.TempDir(), Options{Now: func() time.Time { return time.Date(2026, 7, 23, 1, 32, 50, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateRepo("acme/app", "main"); err != nil {
		t.Fatal(err)
	}
	return s, s.repos[repoKey("acme/app")]
}

// rest sends one REST request as a client would and returns its status.
func rest(t *testing.T, s *Server, method, path, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "gitcache-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// mergeIntoMain opens a pull request of branch into main and merges it
// with a merge commit, whose sha it returns.
func mergeIntoMain(t *testing.T, s *Server, branch string) string {
	t.Helper()
	n, err := s.OpenPR("acme/app", branch, "main", branch, "alice")
	if err != nil {
		t.Fatal(err)
	}
	merged, err := s.MergePR("acme/app", n, MethodMerge)
	if err != nil {
		t.Fatal(err)
	}
	return merged
}

// oracleHead and oracleResolve are branchHead and resolve as they were
// before the cache: one git process per question.
func oracleHead(g *gitRepo, branch string) string {
	out, code, err := g.runCode(nil, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil || code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

func oracleResolve(g *gitRepo, rev string) string {
	arg := rev
	if !isSHA(rev) {
		arg = "refs/heads/" + rev
	}
	out, code, err := g.runCode(nil, nil, "rev-parse", "--verify", "--quiet", arg+"^{commit}")
	if err != nil || code != 0 {
		return ""
	}
	return strings.TrimSpace(out)
}

// oracleCommit is commit as it was before the object reader: git show.
func oracleCommit(g *gitRepo, sha string) (commitInfo, error) {
	out, err := g.run(nil, nil, "show", "-s", "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%s%x00%B", sha)
	if err != nil {
		return commitInfo{}, err
	}
	f := strings.SplitN(out, "\x00", 7)
	if len(f) != 7 {
		return commitInfo{}, fmt.Errorf("git show %s: unexpected output", sha)
	}
	c := commitInfo{SHA: f[0], Tree: f[1], AuthorName: f[3], AuthorEmail: f[4], Subject: f[5], Message: strings.TrimSpace(f[6])}
	if f[2] != "" {
		c.Parents = strings.Fields(f[2])
	}
	return c, nil
}

func oracleBranches(g *gitRepo) []string {
	out, err := g.run(nil, nil, "for-each-ref", "--format=%(refname:strip=2)", "refs/heads/")
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// answers asks g every question the sim asks git, about the given branch
// names and shas. With oracle, the branch questions go to git directly and
// the sha questions to a gitRepo with nothing remembered.
func answers(g *gitRepo, names, shas []string, oracle bool) map[string]string {
	errText := func(err error) string {
		if err != nil {
			return "error"
		}
		return ""
	}
	a := map[string]string{}
	if oracle {
		g = &gitRepo{dir: g.dir}
		defer g.closeProcesses()
		a["branches"] = fmt.Sprint(oracleBranches(g))
		for _, n := range names {
			a["head "+n] = oracleHead(g, n)
			a["resolve "+n] = oracleResolve(g, n)
		}
	} else {
		bs, err := g.branches()
		a["branches"] = fmt.Sprint(bs) + errText(err)
		for _, n := range names {
			a["head "+n] = g.branchHead(n)
			a["resolve "+n] = g.resolve(n)
		}
	}
	// A sha's commit, tree and files come from the object reader; the
	// oracle asks a git process of its own for each (log and between
	// build on commit).
	resolve, treeOf, commit, fileAt := g.resolve, g.treeOf, g.commit, g.fileAt
	if oracle {
		resolve = func(x string) string { return oracleResolve(g, x) }
		treeOf = func(x string) (string, error) { return g.run(nil, nil, "rev-parse", x+"^{tree}") }
		commit = func(x string) (commitInfo, error) { return oracleCommit(g, x) }
		fileAt = func(x, path string) (string, bool, error) {
			out, code, err := g.runCode(nil, nil, "cat-file", "blob", x+":"+path)
			if code != 0 {
				out = ""
			}
			return out, code == 0, err
		}
	}
	for _, x := range shas {
		a["resolve "+x] = resolve(x)
		tree, err := treeOf(x)
		a["tree "+x] = tree + errText(err)
		c, err := commit(x)
		a["commit "+x] = fmt.Sprintf("%+v %s", c, errText(err))
		l, err := g.log(x)
		a["log "+x] = fmt.Sprintf("%d %+v %s", len(l), l, errText(err))
		for _, path := range []string{"README.md", "a.txt", "nope.txt"} {
			content, ok, err := fileAt(x, path)
			a["file "+x+":"+path] = fmt.Sprint(content, ok, errText(err))
		}
		for _, y := range shas {
			pair := x[:7] + " " + y[:7]
			tree, err := g.mergeTree(x, y)
			a["merge-tree "+pair] = tree + fmt.Sprint(err)
			in, err := g.isAncestor(x, y)
			a["is-ancestor "+pair] = fmt.Sprint(in, errText(err))
			n, err := g.count(x, y)
			a["count "+pair] = fmt.Sprint(n, errText(err))
			mb, err := g.mergeBase(x, y)
			a["merge-base "+pair] = mb + errText(err)
			cs, err := g.between(x, y)
			a["between "+pair] = fmt.Sprintf("%+v %s", cs, errText(err))
		}
	}
	return a
}

// names are the branch names asked about: present, absent, and names in
// revision syntax that the table leaves to git.
var cacheNames = []string{"main", "f1", "f2", "gone", "feature/x", "main~1", "main^{tree}", "f1@{0}"}

func sameAsGit(t *testing.T, step string, g *gitRepo, shas []string) {
	t.Helper()
	want := answers(g, cacheNames, shas, true)
	for round := range 2 { // the second round answers from memory
		if diff := cmp.Diff(answers(g, cacheNames, shas, false), want); diff != "" {
			t.Fatalf("%s, round %d: cached answers differ from git's (-cached +git):\n%s", step, round, diff)
		}
	}
}

func TestCacheAnswersAsGitAfterEveryRefChange(t *testing.T) {
	s, r := cacheSim(t)
	g := r.git
	c0 := g.branchHead("main")
	c1, err := s.CommitFile("acme/app", "f1", "a.txt", "one\n", "f1: a")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := s.CommitFile("acme/app", "f2", "a.txt", "two\n", "f2: a") // conflicts with f1
	if err != nil {
		t.Fatal(err)
	}
	c3, err := s.CommitFile("acme/app", "main", "README.md", "# app, moved\n", "main: readme")
	if err != nil {
		t.Fatal(err)
	}
	shas := []string{c0, c1, c2, c3}
	sameAsGit(t, "after commits", g, shas)

	merged := mergeIntoMain(t, s, "f1")
	shas = append(shas, merged)
	sameAsGit(t, "after a merge moved main", g, shas)

	if st := rest(t, s, "PATCH", "/repos/acme/app/git/refs/heads/f2", `{"sha":"`+c0+`","force":true}`); st != 200 {
		t.Fatalf("force move: %d", st)
	}
	sameAsGit(t, "after a force move back", g, shas)

	if st := rest(t, s, "PATCH", "/repos/acme/app/git/refs/heads/main", `{"sha":"`+c2+`"}`); st != 422 {
		t.Fatalf("a move that is no fast forward: %d, want 422", st)
	}
	sameAsGit(t, "after a refused move", g, shas)

	if st := rest(t, s, "DELETE", "/repos/acme/app/git/refs/heads/f1", ""); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	sameAsGit(t, "after a delete", g, shas)

	if st := rest(t, s, "POST", "/repos/acme/app/git/refs", `{"ref":"refs/heads/feature/x","sha":"`+c3+`"}`); st != 201 {
		t.Fatalf("create: %d", st)
	}
	if st := rest(t, s, "POST", "/repos/acme/app/git/refs", `{"ref":"refs/heads/f1","sha":"`+c2+`"}`); st != 201 {
		t.Fatalf("re-create: %d", st)
	}
	sameAsGit(t, "after creates", g, shas)

	// The same questions again start no git process: they are remembered.
	plain := []string{"main", "f1", "f2", "gone", "feature/x"}
	_ = answers(g, plain, shas[:2], false)
	before := g.started.Load()
	for _, x := range shas[:2] {
		_, _ = g.treeOf(x)
		_, _ = g.commit(x)
		_, _, _ = g.fileAt(x, "README.md")
		for _, y := range shas[:2] {
			_, _ = g.mergeTree(x, y)
			_, _ = g.isAncestor(x, y)
			_, _ = g.count(x, y)
		}
	}
	for _, b := range plain {
		_ = g.branchHead(b)
		_ = g.resolve(b)
	}
	_, _ = g.branches()
	if n := g.started.Load() - before; n != 0 {
		t.Errorf("remembered questions started %d git processes, want 0", n)
	}
}

// A new server on a repository already on disk (the local program's data
// folder) reads its refs from git, not from an empty table.
func TestCacheLoadsRefsFromDisk(t *testing.T) {
	s, r := cacheSim(t)
	sha, err := s.CommitFile("acme/app", "f1", "a.txt", "one\n", "f1: a")
	if err != nil {
		t.Fatal(err)
	}
	again := &gitRepo{dir: r.git.dir}
	t.Cleanup(again.closeProcesses)
	if got := again.branchHead("f1"); got != sha {
		t.Fatalf("branchHead(f1) on a fresh gitRepo = %q, want %q", got, sha)
	}
	sameAsGit(t, "fresh gitRepo", again, []string{sha})
}

// Readers that do not hold the server's lock race a writer moving a branch
// back and forth; every read is a value the branch had, and afterwards the
// table agrees with git. Run under -race.
func TestCacheConcurrentReaders(t *testing.T) {
	s, r := cacheSim(t)
	g := r.git
	x := g.branchHead("main")
	y, err := s.CommitFile("acme/app", "main", "a.txt", "one\n", "main: a")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan string, 64)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var got string
				switch i {
				case 0:
					got = g.branchHead("main")
				case 1:
					got = g.resolve("main")
				case 2:
					got, _ = s.BranchHead("acme/app", "main") // under the server's lock
				case 3:
					if bs, _ := g.branches(); fmt.Sprint(bs) != "[main]" {
						got = fmt.Sprint(bs)
					} else {
						got = x
					}
					_, _ = g.mergeTree(x, y)
				}
				if got != x && got != y {
					select {
					case errs <- fmt.Sprintf("reader %d saw %q", i, got):
					default:
					}
				}
			}
		}()
	}
	for i := range 20 {
		to := x
		if i%2 == 1 {
			to = y
		}
		if st := rest(t, s, "PATCH", "/repos/acme/app/git/refs/heads/main", `{"sha":"`+to+`","force":true}`); st != 200 {
			t.Errorf("force move %d: %d", i, st)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	sameAsGit(t, "after concurrent moves", g, []string{x, y})
}

// A fault fires when asked for, whether or not the answer is remembered.
func TestCacheKeepsFaults(t *testing.T) {
	s, _ := cacheSim(t)
	path := "/repos/acme/app/git/ref/heads/main"
	for range 2 {
		if st := rest(t, s, "GET", path, ""); st != 200 {
			t.Fatalf("GET ref: %d", st)
		}
	}
	s.InjectFault(Fault{Method: "GET", PathPrefix: path, Kind: FaultBadGateway})
	if st := rest(t, s, "GET", path, ""); st != 502 {
		t.Fatalf("GET ref with a fault: %d, want 502", st)
	}
	if st := rest(t, s, "GET", path, ""); st != 200 {
		t.Fatalf("GET ref after the fault: %d", st)
	}
}
