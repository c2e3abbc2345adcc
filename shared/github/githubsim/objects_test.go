package githubsim

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The object reader answers as a git process of its own does: commits with
// every shape of message git keeps as given (commit-tree cleans up none),
// a merge's two parents, files, folders and objects that are not there.
func TestObjectReaderAnswersAsGit(t *testing.T) {
	s, r := cacheSim(t)
	g := r.git
	messages := []string{
		"one line",
		"a subject  \t\nwrapped on\ntwo lines\n\nthe body\n\nmore body\n",
		"\n\n  after blank lines\n",
		"trailing spaces   \n\n",
		"unicode é ✓ and <brackets>",
	}
	var shas []string
	for i, m := range messages {
		sha, err := s.CommitFile("acme/app", "main", fmt.Sprintf("dir/f%d.txt", i), fmt.Sprintf("file %d\n", i), m)
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	if _, err := s.CommitFile("acme/app", "f1", "b.txt", "b\n", "f1: b"); err != nil {
		t.Fatal(err)
	}
	merged := mergeIntoMain(t, s, "f1")
	shas = append(shas, merged)
	tree, err := g.treeOf(merged)
	if err != nil {
		t.Fatal(err)
	}
	missing := strings.Repeat("0", 40)
	for _, x := range append(shas, tree, missing) {
		got, gotErr := g.commit(x)
		want, wantErr := oracleCommit(g, x)
		if diff := cmp.Diff(got, want); diff != "" || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("commit %s: %v, git show: %v (-reader +git):\n%s", x, gotErr, wantErr, diff)
		}
		gotTree, gotErr := g.treeOf(x)
		wantTree, wantErr := g.run(nil, nil, "rev-parse", x+"^{tree}")
		if gotTree != wantTree && wantErr == nil || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("tree of %s: %q %v, git rev-parse: %q %v", x, gotTree, gotErr, wantTree, wantErr)
		}
		if got, want := g.resolve(x), oracleResolve(g, x); got != want {
			t.Errorf("resolve %s: %q, git rev-parse: %q", x, got, want)
		}
		for _, path := range []string{"dir/f0.txt", "dir/f4.txt", "dir", "b.txt", "nope", "dir/"} {
			got, ok, err := g.fileAt(x, path)
			out, code, _ := g.runCode(nil, nil, "cat-file", "blob", x+":"+path)
			if err != nil || ok != (code == 0) || ok && got != out {
				t.Errorf("file %s:%s: %q %v %v, git cat-file: %q exit %d", x, path, got, ok, err, out, code)
			}
		}
	}
	if c, _ := g.commit(merged); len(c.Parents) != 2 {
		t.Errorf("the merge commit has parents %v, want two", c.Parents)
	}

	// Closing the server ends both long-lived processes.
	if g.objects.git.cmd == nil || g.refw.git.cmd == nil {
		t.Fatal("the object reader or the ref writer is not running")
	}
	objects, refs := g.objects.git.cmd.Process, g.refw.git.cmd.Process
	s.Close()
	for _, p := range []interface{ Signal(os.Signal) error }{objects, refs} {
		if err := p.Signal(syscall.Signal(0)); err == nil {
			t.Errorf("a git process runs on after Close")
		}
	}
}
