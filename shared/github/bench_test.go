package github_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mainguard/mainguard/shared/github"
)

// BenchmarkBranchHead is the baseline: one REST round trip to the sim.
func BenchmarkBranchHead(b *testing.B) {
	f := newFixtureTB(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := f.c.BranchHead(ctx, repo, "main"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildTestBranch builds a two-PR test branch (7 round trips, two
// real git merges in the sim), to compare with the baseline above.
func BenchmarkBuildTestBranch(b *testing.B) {
	f := newFixtureTB(b)
	ctx := context.Background()
	n1, sha1 := f.openPR(b, "feature-a", "a.txt", "a\n")
	n2, sha2 := f.openPR(b, "feature-b", "b.txt", "b\n")
	heads := []github.Head{{PR: n1, SHA: sha1}, {PR: n2, SHA: sha2}}
	i := 0
	for b.Loop() {
		i++
		if _, err := f.c.BuildTestBranch(ctx, repo, f.base, heads, fmt.Sprintf("trunk-temp/pr-2/%d", i), fmt.Sprintf("trunk-merge/pr-2/%d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate judges 20 required contexts against 200 checks: the
// pure part of every poll.
func BenchmarkEvaluate(b *testing.B) {
	var required []string
	var checks []github.Check
	for i := range 200 {
		name := fmt.Sprintf("ctx-%d", i)
		if i%10 == 0 {
			required = append(required, name)
		}
		checks = append(checks, github.Check{Kind: github.KindCheckRun, Name: name, Status: "completed", Conclusion: "success"})
	}
	for b.Loop() {
		if e := github.Evaluate(required, checks); e.Verdict != github.Passed {
			b.Fatal(e)
		}
	}
}
