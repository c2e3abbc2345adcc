package web_test

import (
	"context"
	"time"
)

// openPR opens a PR of acme/web adding its own file, name.txt.
func (e *env) openPR(name, title string) int {
	e.tb.Helper()
	if _, err := e.Sim.CommitFile(repoFull, name, name+".txt", name+"\n", "add "+name); err != nil {
		e.tb.Fatal(err)
	}
	n, err := e.Sim.OpenPR(repoFull, name, "main", title, "ada")
	if err != nil {
		e.tb.Fatal(err)
	}
	return n
}

func (e *env) submit(n int) {
	e.tb.Helper()
	e.api("acme", "submitPullRequest", map[string]any{"repo": webRepo, "targetBranch": "main", "pr": map[string]any{"number": n}})
}

// tick runs the scheduled function a minute later, after CI has judged
// every new test branch (failing those holding a file of bad).
func (e *env) tick(bad ...string) {
	e.tb.Helper()
	if err := e.CI.Judge(repoFull, bad...); err != nil {
		e.tb.Fatal(err)
	}
	e.Clock.Advance(time.Minute)
	if err := e.App.Tick(context.Background()); err != nil {
		e.tb.Fatal(err)
	}
}

// state is PR n's state as the API answers it.
func (e *env) state(n int) string {
	e.tb.Helper()
	out := e.api("acme", "getSubmittedPullRequest", map[string]any{"repo": webRepo, "targetBranch": "main", "pr": map[string]any{"number": n}})
	var v struct{ State string }
	_ = jsonUnmarshal(out, &v)
	return v.State
}

// until ticks until the PRs are in the states wanted.
func (e *env) until(want map[int]string, bad ...string) {
	e.tb.Helper()
	for range 30 {
		done := true
		for n, s := range want {
			done = done && e.state(n) == s
		}
		if done {
			return
		}
		e.tick(bad...)
	}
	e.tb.Fatalf("the queue did not reach %v in 30 ticks", want)
}

// scene is a queue on acme/web main with PRs in every state a person
// meets: #1 merged; #2 (an HTML title) failed, then resubmitted and
// merged; #3 failed; #4 testing; #5 pending; #6 cancelled.
type scene struct{ merged, retested, failed, testing, pending, cancelled int }

func (e *env) queueScene() scene {
	e.tb.Helper()
	e.api("acme", "createQueue", map[string]any{"repo": webRepo, "targetBranch": "main"})
	var s scene
	s.merged = e.openPR("one", "Add one")
	s.retested = e.openPR("two", "Fix "+hostile)
	s.failed = e.openPR("three", "Add three")
	// Each PR's own CI passed (GitHub merges none whose head failed the
	// status main requires): what fails below is their test branches.
	if err := e.CI.Judge(repoFull); err != nil {
		e.tb.Fatal(err)
	}
	for _, n := range []int{s.merged, s.retested, s.failed} {
		e.submit(n)
	}
	e.until(map[int]string{s.merged: "MERGED", s.retested: "FAILED", s.failed: "FAILED"}, "two.txt", "three.txt")
	e.submit(s.retested) // the fix was elsewhere: test it again
	e.until(map[int]string{s.retested: "MERGED"}, "three.txt")
	s.testing, s.pending, s.cancelled = e.openPR("four", "Add four"), e.openPR("five", "Add five"), e.openPR("six", "Add six")
	for _, n := range []int{s.testing, s.pending, s.cancelled} {
		e.submit(n)
	}
	e.api("acme", "cancelPullRequest", map[string]any{"repo": webRepo, "targetBranch": "main", "pr": map[string]any{"number": s.cancelled}})
	e.until(map[int]string{s.testing: "TESTING", s.pending: "PENDING"})
	return s
}
