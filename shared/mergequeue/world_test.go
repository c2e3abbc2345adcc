package mergequeue

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mainguard/mainguard/shared/repository"
)

// world plays GitHub for the tests: it builds test branches, reports checks
// (a run fails when a "bad" PR is among its heads), merges pinned to a head,
// and moves the target branch.
type world struct {
	branch     string
	head       string
	commits    map[string][]int // sha → PR numbers merged in (negative: foreign pushes)
	prs        map[int]*ghPR
	order      []int // PR numbers in creation order, for stable observations
	protection []string

	bad  map[int]bool // a run with this PR under test fails its checks
	hold map[int]bool // a run with this PR among its heads stays pending
	slow map[int]bool // a run with this PR under test stays pending
	// targets are the impacted targets set for each PR (absent: none set;
	// allTargets: "ALL"); parallel says the queue is in PARALLEL mode, for
	// the merges to record.
	targets    map[int][]string
	allTargets map[int]bool
	parallel   bool
	upToDate   map[int]bool // the PR's head contains the target head
	// flakes[pr] is how many more runs with pr under test fail (a flake
	// each), evidence[pr] what test health shows of their failed tests
	// (nil: no upload).
	flakes   map[int]int
	evidence map[int][]FailedTest
	flaked   map[string]bool // run ids that flake
	// A run whose test branch reuses a head (a flaky retry) shows, for its
	// first reuseLag observations, the result that head already had: GitHub
	// keeps the latest result per name until CI reports again. latest is
	// each head's latest result.
	reuseLag  int
	lag       map[string]int
	latest    map[string]ciResult
	reused    map[string]string // run id → the head it reused
	conflicts map[int]bool      // merging this PR into a test branch conflicts
	refuse    map[int]bool      // the merge API refuses this PR

	builds          map[string]string // run id → test branch sha, while the branch exists
	built           map[string]string // every build ever
	buildHeads      map[string][]RunPR
	pendingBuilds   []BuildResult
	pendingMerges   []MergeResult
	pendingNotified []string

	merges   []worldMerge
	statuses map[int]SetStatus
	events   map[string]Event
	eventLog []Event
	deleted  map[string]bool
	n        int
}

// ciResult is a head's latest result of the "ci" check, with its id.
type ciResult struct{ state, id string }

type ghPR struct {
	number       int
	state        string
	head         string
	base         string
	draft        bool
	mergeability Mergeability
	mergeSHA     string
}

// worldMerge is one successful merge on the target branch.
type worldMerge struct {
	pr     int
	sha    string // the PR head merged
	runID  string // empty for a merge by hand
	manual bool
	before string // the target head it merged onto
	// parallel: merged while the queue was in PARALLEL mode, where PRs of
	// other lanes may have merged since the run's base.
	parallel bool
}

func newWorld() *world {
	w := &world{
		branch: "main", commits: map[string][]int{}, prs: map[int]*ghPR{},
		protection: []string{"ci"},
		bad:        map[int]bool{}, hold: map[int]bool{}, slow: map[int]bool{},
		targets: map[int][]string{}, allTargets: map[int]bool{}, upToDate: map[int]bool{},
		flakes: map[int]int{}, evidence: map[int][]FailedTest{}, flaked: map[string]bool{}, lag: map[string]int{}, latest: map[string]ciResult{}, reused: map[string]string{}, conflicts: map[int]bool{}, refuse: map[int]bool{},
		builds: map[string]string{}, built: map[string]string{}, buildHeads: map[string][]RunPR{},
		statuses: map[int]SetStatus{}, events: map[string]Event{}, deleted: map[string]bool{},
	}
	w.head = w.commit(nil)
	return w
}

func (w *world) commit(content []int) string {
	w.n++
	sha := fmt.Sprintf("c%04d", w.n)
	w.commits[sha] = content
	return sha
}

func (w *world) openPR(n int) {
	w.n++
	w.prs[n] = &ghPR{number: n, state: PROpen, head: fmt.Sprintf("h%d-%d", n, w.n), base: w.branch, mergeability: Mergeable}
	w.order = append(w.order, n)
}

func (w *world) push(n int) {
	w.n++
	w.prs[n].head = fmt.Sprintf("h%d-%d", n, w.n)
}

func (w *world) pushTarget() {
	w.head = w.commit(append(slices.Clone(w.commits[w.head]), -w.n))
}

func (w *world) mergeByHand(n int) {
	p := w.prs[n]
	if p.state != PROpen {
		return
	}
	before := w.head
	w.head = w.commit(append(slices.Clone(w.commits[w.head]), n))
	p.state, p.mergeSHA = PRMerged, w.head
	w.merges = append(w.merges, worldMerge{pr: n, sha: p.head, manual: true, before: before})
}

func (w *world) apply(effects []Effect) {
	for _, e := range effects {
		switch e.Kind {
		case EffectStartRun:
			w.build(e.StartRun)
		case EffectMergePR:
			w.merge(e.Key, e.MergePR)
		case EffectSetStatus:
			w.statuses[e.SetStatus.PRNumber] = *e.SetStatus
		case EffectDeleteBranches:
			for _, b := range e.DeleteBranches.Branches {
				w.deleted[b] = true
			}
			delete(w.builds, e.DeleteBranches.RunID) // no branch, no checks
		case EffectNotify:
			w.pendingNotified = append(w.pendingNotified, e.Key)
		case EffectEvent:
			if _, dup := w.events[e.Event.ID]; !dup {
				w.events[e.Event.ID] = *e.Event
				w.eventLog = append(w.eventLog, *e.Event)
			}
		}
	}
}

func (w *world) build(s *StartRun) {
	if sha, ok := w.built[s.RunID]; ok { // built before: same branch again
		w.builds[s.RunID] = sha
		w.pendingBuilds = append(w.pendingBuilds, BuildResult{RunID: s.RunID, HeadSHA: sha})
		return
	}
	content := slices.Clone(w.commits[s.BaseSHA])
	for _, h := range s.Heads {
		if w.conflicts[h.PRNumber] {
			w.pendingBuilds = append(w.pendingBuilds, BuildResult{RunID: s.RunID, ConflictPR: h.PRNumber})
			return
		}
		content = append(content, h.PRNumber)
	}
	for _, h := range s.Heads {
		if h.UnderTest && w.flakes[h.PRNumber] > 0 {
			w.flakes[h.PRNumber]--
			w.flaked[s.RunID] = true
		}
	}
	sha := s.ReuseSHA
	if _, ok := w.commits[sha]; ok {
		w.lag[s.RunID], w.reused[s.RunID] = w.reuseLag, sha
	} else {
		sha = w.commit(content)
	}
	w.builds[s.RunID] = sha
	w.built[s.RunID] = sha
	w.buildHeads[s.RunID] = s.Heads
	w.pendingBuilds = append(w.pendingBuilds, BuildResult{RunID: s.RunID, HeadSHA: sha})
}

func (w *world) merge(key string, m *MergePR) {
	p := w.prs[m.PRNumber]
	res := MergeResult{Key: key, PRNumber: m.PRNumber}
	switch {
	case p == nil || p.state != PROpen:
		res.Message = "Pull Request is not mergeable"
	case p.head != m.SHA:
		res.Message = "Head branch was modified. Review and try the merge again."
	case w.refuse[m.PRNumber]:
		res.Message = "Required status check is expected"
	default:
		before := w.head
		w.head = w.commit(append(slices.Clone(w.commits[w.head]), m.PRNumber))
		p.state, p.mergeSHA = PRMerged, w.head
		res.Merged, res.SHA = true, w.head
		w.merges = append(w.merges, worldMerge{pr: m.PRNumber, sha: m.SHA, runID: m.RunID, before: before, parallel: w.parallel})
	}
	w.pendingMerges = append(w.pendingMerges, res)
}

// observe is what a driver would gather now; results are handed over once.
func (w *world) observe(s Snapshot) Observations {
	o := Observations{
		TargetHeadSHA:    w.head,
		BranchProtection: &BranchProtection{Contexts: slices.Clone(w.protection)},
		Builds:           w.pendingBuilds,
		Merges:           w.pendingMerges,
		Notified:         w.pendingNotified,
	}
	w.pendingBuilds, w.pendingMerges, w.pendingNotified = nil, nil, nil
	for _, n := range w.order {
		p := w.prs[n]
		o.PRs = append(o.PRs, PRObservation{
			Number: n, State: p.state, MergeSHA: p.mergeSHA, HeadSHA: p.head, BaseBranch: p.base,
			Draft: p.draft, Mergeability: p.mergeability, Title: fmt.Sprintf("PR %d", n), Author: "dev",
		})
	}
	for _, n := range w.order {
		if names, ok := w.targets[n]; ok || w.allTargets[n] {
			o.Targets = append(o.Targets, TargetsObservation{PRNumber: n, HeadSHA: w.prs[n].head, Targets: NewTargets(w.allTargets[n], names)})
		}
	}
	if pr, head, ok := DirectMergeCandidate(s, o.PRs); ok {
		state := "success"
		if w.bad[pr] {
			state = "failure"
		}
		o.Direct = &DirectObservation{PRNumber: pr, HeadSHA: head, TargetSHA: w.head, UpToDate: w.upToDate[pr], Checks: map[string]string{"ci": state}}
	}
	for _, r := range EvidenceWanted(s) {
		if ev, ok := w.evidence[r.PRNumber]; ok {
			o.Evidence = append(o.Evidence, RunEvidence{RunID: r.ID, Failed: ev})
		}
	}
	for id, sha := range w.builds {
		state := "success"
		for _, h := range w.buildHeads[id] {
			if w.hold[h.PRNumber] || h.UnderTest && w.slow[h.PRNumber] {
				state = "pending"
			}
		}
		for _, h := range w.buildHeads[id] {
			if h.UnderTest && w.bad[h.PRNumber] && state == "success" {
				state = "failure"
			}
		}
		if w.flaked[id] && state == "success" {
			state = "failure"
		}
		res := ciResult{state, "result-" + id}
		if w.lag[id] > 0 {
			w.lag[id]--
			res = w.latest[sha]
		}
		w.latest[sha] = res
		o.Checks = append(o.Checks, RunChecks{RunID: id, SHA: sha, Checks: map[string]string{"ci": res.state}, IDs: map[string]string{"ci": res.id}})
	}
	slices.SortFunc(o.Checks, func(a, b RunChecks) int { return cmpString(a.RunID, b.RunID) })
	return o
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sim is a driver over a world: it steps, saves, and performs effects.
type sim struct {
	t     testing.TB
	w     *world
	snap  Snapshot
	now   time.Time
	ids   int
	runs  map[string]Run // every run ever output, last version
	trans []Transition
}

var t0 = time.Date(2026, 7, 23, 1, 0, 0, 0, time.UTC)

func newSim(t testing.TB, conc int) *sim {
	t.Helper()
	q := DefaultQueue(repository.Ref{Host: "github.com", Owner: "acme", Name: "app"}, "main")
	q.Concurrency = conc
	return &sim{t: t, w: newWorld(), snap: NewSnapshot(q), now: t0, runs: map[string]Run{}}
}

func (s *sim) newID() string {
	s.ids++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", s.ids)
}

func (s *sim) record(out Output) {
	for _, r := range out.Runs {
		s.runs[r.ID] = r
	}
	s.trans = append(s.trans, out.Transitions...)
}

// step is one driver cycle: observe, step, save, perform.
func (s *sim) step() Output {
	s.t.Helper()
	snap, out := Step(s.snap, s.w.observe(s.snap), s.now, s.newID)
	s.snap = snap
	s.record(out)
	s.w.apply(out.Effects)
	return out
}

func (s *sim) steps(n int) {
	s.t.Helper()
	for range n {
		s.step()
		s.now = s.now.Add(30 * time.Second)
	}
}

func (s *sim) submit(pr int, prio *int) {
	s.t.Helper()
	if _, ok := s.w.prs[pr]; !ok {
		s.w.openPR(pr)
	}
	snap, out, err := Submit(s.snap, SubmitRequest{PRNumber: pr, Priority: prio}, s.now, s.newID)
	if err != nil {
		s.t.Fatalf("submit %d: %v", pr, err)
	}
	s.snap = snap
	s.record(out)
	s.w.apply(out.Effects)
}

func (s *sim) cancel(pr int) {
	s.t.Helper()
	snap, out, err := Cancel(s.snap, CancelRequest{PRNumber: pr}, s.now)
	if err != nil {
		s.t.Fatalf("cancel %d: %v", pr, err)
	}
	s.snap = snap
	s.record(out)
	s.w.apply(out.Effects)
}

func (s *sim) update(p QueuePatch) {
	s.t.Helper()
	snap, out, err := UpdateQueue(s.snap, p, s.now)
	if err != nil {
		s.t.Fatalf("update: %v", err)
	}
	s.snap = snap
	s.record(out)
}

func (s *sim) entry(pr int) Entry {
	s.t.Helper()
	for _, e := range s.snap.Entries {
		if e.PRNumber == pr {
			return e
		}
	}
	s.t.Fatalf("no entry for PR %d", pr)
	return Entry{}
}

func (s *sim) state(pr int) PRState { return s.entry(pr).State }

func (s *sim) mergedOrder() []int {
	var out []int
	for _, m := range s.w.merges {
		out = append(out, m.pr)
	}
	return out
}

// transitionsOf lists "FROM>TO:REASON" for pr, in order.
func (s *sim) transitionsOf(pr int) []string {
	var out []string
	for _, t := range s.trans {
		if t.PRNumber == pr {
			out = append(out, fmt.Sprintf("%s>%s:%s", t.From, t.To, t.Reason))
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// intersects is whether two PRs' impacted targets overlap, exactly (not by
// the engine's fingerprints): ALL overlaps all but an empty list.
func (w *world) intersects(a, b int) bool {
	ta, tb := w.targets[a], w.targets[b]
	if (!w.allTargets[a] && len(ta) == 0) || (!w.allTargets[b] && len(tb) == 0) {
		return false
	}
	if w.allTargets[a] || w.allTargets[b] {
		return true
	}
	return slices.ContainsFunc(ta, func(t string) bool { return slices.Contains(tb, t) })
}
