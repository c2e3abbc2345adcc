package githubsim

import (
	"strings"
	"testing"
)

// One git process writes a repository's branches, one transaction per
// write; a write git refuses fails with git's own message and changes
// nothing, and the next write goes through a fresh process.
func TestRefWriterWritesThroughOneProcess(t *testing.T) {
	s, r := cacheSim(t)
	g := r.git
	c1, err := s.CommitFile("acme/app", "f1", "a.txt", "one\n", "f1: a")
	if err != nil {
		t.Fatal(err)
	}
	c0 := g.branchHead("main")

	before := g.started.Load()
	for i := range 10 {
		to := []string{c0, c1}[i%2]
		if err := g.setRef("moving", to); err != nil {
			t.Fatal(err)
		}
		if got := oracleHead(g, "moving"); got != to {
			t.Fatalf("write %d: git has moving at %q, want %q", i, got, to)
		}
	}
	if err := g.deleteRef("moving"); err != nil {
		t.Fatal(err)
	}
	if got := oracleHead(g, "moving"); got != "" {
		t.Fatalf("a deleted branch is at %q in git", got)
	}
	// Eleven oracle questions, and no process for the eleven writes: the
	// writer runs since CommitFile moved f1.
	if n := g.started.Load() - before; n != 11 {
		t.Errorf("%d git processes, want the oracle's 11", n)
	}

	// A commit's tree is no commit: git refuses it for a branch.
	tree, err := g.treeOf(c1)
	if err != nil {
		t.Fatal(err)
	}
	err = g.setRef("f1", tree)
	if err == nil || !strings.Contains(err.Error(), "non-commit") {
		t.Fatalf("a branch set to a tree: %v, want git's refusal", err)
	}
	if got := oracleHead(g, "f1"); got != c1 {
		t.Fatalf("the refused write moved f1 to %q", got)
	}
	sameAsGit(t, "after a refused write", g, []string{c0, c1})
	if err := g.setRef("f1", c0); err != nil {
		t.Fatalf("the write after a refused one: %v", err)
	}
	if got := oracleHead(g, "f1"); got != c0 {
		t.Fatalf("f1 at %q after the write, want %q", got, c0)
	}

	// A name with a newline would be two commands: refused before git.
	if err := g.setRef("x\ndelete refs/heads/main", c0); err == nil {
		t.Fatal("a name with a newline was written")
	}
	if got := oracleHead(g, "main"); got != c0 {
		t.Fatalf("main at %q, want %q", got, c0)
	}
}
