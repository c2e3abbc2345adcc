package queuesim

import (
	"strconv"
	"time"

	"github.com/mainguard/mainguard/shared/mergequeue"
)

// world plays GitHub and CI for the engine: it performs the effects of
// each step and shows what came of them in the next observations.
type world struct {
	contexts []string // the statuses CI reports, and branch protection requires

	head string // the target branch head
	shas int    // commits made so far, for fresh shas
	prs  []*pullRequest

	ci ci

	// Answers to the last effects, handed to the next step once.
	builds []mergequeue.BuildResult
	merges []mergequeue.MergeResult

	events   map[string]int // events by type
	statuses int

	// prObs and targetObs hold the last standing observations' PRs and
	// targets, written over by the next: the engine reads observations
	// only during the step they are passed to, and a step (or probe) at
	// every event made most of a run's garbage.
	prObs     []mergequeue.PRObservation
	targetObs []mergequeue.TargetsObservation
}

// pullRequest is a PR as GitHub holds it, with what the simulation keeps
// of its time in the queue.
type pullRequest struct {
	number int
	title  string
	bad    bool // a run with this PR among its heads fails, and so do its own checks
	// targets are its impacted targets, set when it is opened
	// (setImpactedTargets): its group's one target, or ALL without groups.
	targets  *mergequeue.Targets
	base     string // the target head it was opened on
	head     string
	state    string // mergequeue.PROpen or PRMerged
	mergeSHA string

	submitted time.Time
	outcome   mergequeue.PRState // the entry's final state; empty while in the queue
	concluded time.Time
}

func newWorld(contexts []string, c ci) *world {
	w := &world{contexts: contexts, events: map[string]int{}, ci: c}
	w.ci.runs = map[string]*ciRun{}
	w.head = w.commit()
	return w
}

// commit makes a fresh sha.
func (w *world) commit() string {
	w.shas++
	return "c" + strconv.Itoa(w.shas)
}

// openPR opens the next PR on the target branch as it is now, mergeable,
// with its impacted targets.
func (w *world) openPR(bad bool, targets *mergequeue.Targets) *pullRequest {
	n := len(w.prs) + 1
	p := &pullRequest{
		number: n, title: "PR " + strconv.Itoa(n), bad: bad, targets: targets,
		base: w.head, head: "h" + strconv.Itoa(n), state: mergequeue.PROpen,
	}
	w.prs = append(w.prs, p)
	return p
}

func (w *world) pr(number int) *pullRequest { return w.prs[number-1] }

// apply performs a step's effects at time now, in order.
func (w *world) apply(effects []mergequeue.Effect, now time.Time) {
	for _, e := range effects {
		switch e.Kind {
		case mergequeue.EffectStartRun:
			w.builds = append(w.builds, w.ci.build(e.StartRun, now, w.broken(e.StartRun.Heads), w.commit))
		case mergequeue.EffectMergePR:
			w.merges = append(w.merges, w.merge(e.Key, e.MergePR))
		case mergequeue.EffectDeleteBranches:
			w.ci.deleteBranches(e.DeleteBranches.RunID)
		case mergequeue.EffectSetStatus:
			w.statuses++
		case mergequeue.EffectEvent:
			w.events[e.Event.Type]++
		}
	}
}

// broken are the tests a test branch of these heads breaks: one for each
// bad PR.
func (w *world) broken(heads []mergequeue.RunPR) []mergequeue.FailedTest {
	var out []mergequeue.FailedTest
	for _, h := range heads {
		if w.pr(h.PRNumber).bad {
			out = append(out, broken(h.PRNumber))
		}
	}
	return out
}

// merge merges a PR as GitHub's merge call does: an open PR, at exactly the
// pinned head.
func (w *world) merge(key string, m *mergequeue.MergePR) mergequeue.MergeResult {
	res := mergequeue.MergeResult{Key: key, PRNumber: m.PRNumber}
	p := w.pr(m.PRNumber)
	switch {
	case p.state != mergequeue.PROpen:
		res.Message = "Pull Request is not mergeable"
	case p.head != m.SHA:
		res.Message = "Head branch was modified. Review and try the merge again."
	default:
		w.head = w.commit()
		p.state, p.mergeSHA = mergequeue.PRMerged, w.head
		res.Merged, res.SHA = true, w.head
	}
	return res
}

// awaited reports whether the engine has yet to see what the world holds
// for it at time now: answers to the last effects, or test results it
// waits for.
func (w *world) awaited(snap mergequeue.Snapshot, now time.Time) bool {
	t, ok := w.nextUpload(snap)
	return len(w.builds) > 0 || len(w.merges) > 0 || ok && !t.After(now)
}

// nextUpload is when test results that queue snap waits for and has not
// been told of come (ci.nextUpload).
func (w *world) nextUpload(snap mergequeue.Snapshot) (time.Time, bool) {
	return w.ci.nextUpload(mergequeue.EvidenceWanted(snap))
}

// observe is what a driver gathers at time now on queue snap, after the
// last effects: the standing facts, the answers to those effects (handed
// over once), the checks of the runs that ended by now, and test health's
// evidence for the failed runs the engine wants it of.
func (w *world) observe(now time.Time, snap mergequeue.Snapshot, active []int) mergequeue.Observations {
	o := w.standing(snap, active)
	o.Builds, o.Merges = w.builds, w.merges
	w.builds, w.merges = nil, nil
	o.Checks = w.ci.finished(now, w.contexts)
	o.Evidence = w.ci.evidence(mergequeue.EvidenceWanted(snap), now)
	return o
}

// standing are the facts that hold until something happens: the target
// head, branch protection, the PRs in the queue, their impacted targets
// when the queue is (or is becoming) PARALLEL, and what direct merge asks
// of its candidate.
func (w *world) standing(snap mergequeue.Snapshot, active []int) mergequeue.Observations {
	w.prObs, w.targetObs = w.prObs[:0], w.targetObs[:0]
	parallel := snap.Queue.Mode == mergequeue.ModeParallel || snap.Queue.NextMode == mergequeue.ModeParallel
	for _, n := range active {
		p := w.pr(n)
		w.prObs = append(w.prObs, mergequeue.PRObservation{
			Number: n, State: p.state, MergeSHA: p.mergeSHA, HeadSHA: p.head, BaseBranch: branch,
			Mergeability: mergequeue.Mergeable, Title: p.title, Author: "sim",
		})
		if parallel {
			w.targetObs = append(w.targetObs, mergequeue.TargetsObservation{PRNumber: n, HeadSHA: p.head, Targets: p.targets})
		}
	}
	o := mergequeue.Observations{
		TargetHeadSHA:    w.head,
		BranchProtection: &mergequeue.BranchProtection{Contexts: defaultContexts},
		PRs:              w.prObs,
	}
	if parallel {
		o.Targets = w.targetObs
	}
	o.Direct = w.direct(snap, o.PRs)
	return o
}

// direct is what GitHub says of the PR direct merge would take next: up to
// date when it was opened on the target head as it is now, and its own
// checks, which fail when it is bad.
func (w *world) direct(snap mergequeue.Snapshot, prs []mergequeue.PRObservation) *mergequeue.DirectObservation {
	n, head, ok := mergequeue.DirectMergeCandidate(snap, prs)
	if !ok {
		return nil
	}
	p := w.pr(n)
	o := &mergequeue.DirectObservation{PRNumber: n, HeadSHA: head, TargetSHA: w.head, UpToDate: p.base == w.head}
	if o.UpToDate {
		state := "success"
		if p.bad {
			state = "failure"
		}
		o.Checks = make(map[string]string, len(w.contexts))
		for _, ctx := range w.contexts {
			o.Checks[ctx] = state
		}
	}
	return o
}
