package healthsim

import (
	"time"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// Run replays the history of cfg through each classifier and returns a
// Result each, in order; the history is drawn once, so every classifier
// sees the very same runs. With no classifier it replays through Current
// under cfg.Settings.
func Run(cfg Config, classifiers ...Classifier) ([]Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(classifiers) == 0 {
		classifiers = []Classifier{Current(cfg.Settings)}
	}
	h := generate(cfg)
	out := make([]Result, len(classifiers))
	for i, c := range classifiers {
		out[i] = replay(cfg, h, c)
	}
	return out, nil
}

// seen is what the batch records of a commit hold of one test: its first
// failure and first pass, with their branches.
type seen struct {
	failedAt, passedAt         time.Time
	failedBranch, passedBranch string
}

// tracked is a test's aggregate under one classifier and what the figures
// need of its course.
type tracked struct {
	tc   testhealth.TestCase
	runs int // every run so far

	failedAt      time.Time // its first failure (zero: none)
	runsAtFailure int
	detected      bool
	latency       int // runs from its first failure to its first listing as flaky

	changes          int
	changeSHA        string // the commit of the latest change
	beforeChange     string // the value before it
	sameCommitFlips  int
	everUnhealthy    bool
	everFlaky        bool
	everBroken       bool
	brokenOnEvidence bool

	brokenAfter int // regression: commits of main from the break to broken (0: not yet)

	// Monitored runs since its last monitored failure, and that failure:
	// counted by the simulator itself, to check the classifier's recovery.
	clean       int
	lastFailure time.Time
	recovery    *recovery // fixed test: its recovery after the fix
}

// recovery is a fixed test's way back to healthy.
type recovery struct {
	done     bool
	runs     int           // monitored runs from the fix to healthy
	took     time.Duration // time from the fix to healthy
	clean    int           // clean runs when it became healthy
	asked    int           // the clean runs its recovery asked then (RecoveryRuns)
	late     bool          // healthy later than its clean runs and recovery days allowed
	sinceFix int           // monitored runs since the fix
	fixedAt  time.Time
}

// replay runs history h through classifier c.
func replay(cfg Config, h history, c Classifier) Result {
	p := &replayer{h: h, c: c, s: c.Settings, tests: make([]tracked, len(h.tests)), records: map[string]map[int]seen{}}
	for i, t := range h.tests {
		p.tests[i].tc = testhealth.TestCase{ID: t.id, Name: t.id, FirstSeen: start}
	}
	p.r = Result{Classifier: c.Name, Settings: p.s}
	nextSweep := start.Add(time.Hour)
	for _, u := range h.uploads {
		for ; !nextSweep.After(u.at); nextSweep = nextSweep.Add(time.Hour) {
			p.sweep(nextSweep)
		}
		p.upload(u)
	}
	for ; !nextSweep.After(h.end); nextSweep = nextSweep.Add(time.Hour) {
		p.sweep(nextSweep)
	}
	for i := range p.tests {
		p.checkRecovery(i, h.end)
	}
	p.r.collect(cfg, h, p.tests)
	return p.r
}

// replayer is one replay of a history through a classifier under its
// settings: each test's aggregate and course, the batch records of each
// commit (commit → test → what they hold), and the figures so far.
type replayer struct {
	h       history
	c       Classifier
	s       testhealth.Settings
	tests   []tracked
	records map[string]map[int]seen
	r       Result
}

// upload counts the runs of upload u, then decides each of its tests.
func (p *replayer) upload(u upload) {
	p.r.Uploads++
	// The infrastructure guard's share.
	g := testhealth.NewGuardCount(len(u.tests))
	for k, i := range u.tests {
		g.Add(p.h.tests[i].id, 0, !u.failed[k], u.failed[k])
	}
	guarded := p.s.Guarded(g.Counts())
	if guarded {
		p.r.Guarded++
	}
	up := testhealth.UploadRuns{
		Upload: u.id, At: u.at, SHA: u.sha, Branch: u.branch,
		Monitored: !guarded && testhealth.MatchBranch(p.s.Branches, u.branch), Guarded: guarded,
	}
	rec := p.records[u.sha]
	if rec == nil {
		rec = map[int]seen{}
		p.records[u.sha] = rec
	}
	commits := map[int]*testhealth.CommitResult{}
	for k, i := range u.tests {
		failed := u.failed[k]
		p.count(u, up, i, failed, rec)
		if guarded {
			continue
		}
		if cr := commitEvidence(u, rec, i, failed); cr != nil {
			commits[i] = cr
		}
	}
	for _, i := range u.tests {
		p.checkRecovery(i, u.at)
		p.decide(i, commits[i], u.at, u.sha)
		tr := &p.tests[i]
		if t := p.h.tests[i]; t.kind == regression && u.main && tr.brokenAfter == 0 && testhealth.Previous(tr.tc) == testhealth.Broken && t.broken(u.commit) {
			tr.brokenAfter = u.commit - t.at + 1
		}
	}
}

// count counts test i's run in upload u (up) into its aggregate and its
// course; rec is what the batch records of u's commit hold.
func (p *replayer) count(u upload, up testhealth.UploadRuns, i int, failed bool, rec map[int]seen) {
	tr := &p.tests[i]
	run := testhealth.Run{Status: "passed"}
	if failed {
		run.Status = "failed"
	}
	var onCommit testhealth.CommitSoFar
	if failed && up.Monitored {
		sn := rec[i]
		onCommit = testhealth.CommitSoFar{Failed: !sn.failedAt.IsZero(), Passed: !sn.passedAt.IsZero()}
	}
	p.c.Count(&tr.tc, up, []testhealth.Run{run}, onCommit)
	tr.runs++
	p.r.Runs++
	if failed && !u.infra && tr.failedAt.IsZero() {
		tr.failedAt, tr.runsAtFailure = u.at, tr.runs
	}
	if up.Monitored {
		if failed {
			tr.clean, tr.lastFailure = 0, u.at
		} else {
			tr.clean++
		}
		if rc := tr.recovery; rc != nil && !rc.done {
			rc.sinceFix++
		}
	}
	if t := p.h.tests[i]; t.kind == fixed && u.commit >= t.at && tr.recovery == nil {
		tr.recovery = &recovery{fixedAt: u.at}
		if up.Monitored {
			tr.recovery.sinceFix = 1
		}
	}
}

// commitEvidence is the evidence of test i's run in upload u beside the
// other uploads of its commit (rec, which it updates): a failure here and
// a pass in another upload of the commit, or the other way round (the
// store's CommitEvidence), with the branch of the earlier; nil if none.
func commitEvidence(u upload, rec map[int]seen, i int, failed bool) *testhealth.CommitResult {
	var cr *testhealth.CommitResult
	sn := rec[i]
	if failed && !sn.passedAt.IsZero() {
		cr = &testhealth.CommitResult{SHA: u.sha, Branch: sn.passedBranch, PassedAt: sn.passedAt, FailedAt: u.at}
	}
	if !failed && !sn.failedAt.IsZero() {
		cr = &testhealth.CommitResult{SHA: u.sha, Branch: sn.failedBranch, PassedAt: u.at, FailedAt: sn.failedAt}
	}
	if failed && sn.failedAt.IsZero() {
		sn.failedAt, sn.failedBranch = u.at, u.branch
	}
	if !failed && sn.passedAt.IsZero() {
		sn.passedAt, sn.passedBranch = u.at, u.branch
	}
	rec[i] = sn
	return cr
}

// decide has the classifier decide test i at now (with the commit's
// evidence, if any, of the upload of sha) and follows its course.
func (p *replayer) decide(i int, commit *testhealth.CommitResult, now time.Time, sha string) {
	tr := &p.tests[i]
	before := testhealth.Previous(tr.tc)
	tr.tc = p.c.Decide(tr.tc, commit, now)
	after := testhealth.Previous(tr.tc)
	t := p.h.tests[i]
	if after != before {
		p.r.StatusChanges++
		tr.changes++
		if sha != "" && sha == tr.changeSHA && after == tr.beforeChange {
			tr.sameCommitFlips++
		}
		tr.changeSHA, tr.beforeChange = sha, before
	}
	if after != testhealth.Healthy {
		tr.everUnhealthy = true
	}
	switch after {
	case testhealth.Flaky:
		tr.everFlaky = true
		if !tr.detected && !tr.failedAt.IsZero() {
			tr.detected, tr.latency = true, tr.runs-tr.runsAtFailure
		}
	case testhealth.Broken:
		tr.everBroken = true
		if f := tr.tc.Flake; f != nil && now.Sub(f.At) < time.Duration(p.s.RecoveryDays)*testhealth.Day && t.kind != regression {
			tr.brokenOnEvidence = true
		}
	}
	if rc := tr.recovery; rc != nil && !rc.done && after == testhealth.Healthy && before != testhealth.Healthy {
		rc.done, rc.runs, rc.took, rc.clean = true, rc.sinceFix, now.Sub(rc.fixedAt), tr.clean
	}
}

// sweep is the hourly reclassification: every test not healthy is
// decided again at now.
func (p *replayer) sweep(now time.Time) {
	for i := range p.tests {
		if testhealth.Previous(p.tests[i].tc) != testhealth.Healthy {
			p.decide(i, nil, now, "")
		}
	}
}

// checkRecovery notes, before a decision at now, whether a fixed test
// still flaky is due to be healthy by the rules: its clean runs and the
// recovery days since it last flaked.
func (p *replayer) checkRecovery(i int, now time.Time) {
	tr := &p.tests[i]
	rc := tr.recovery
	if rc == nil || rc.done || p.c.RecoveryRuns == nil || testhealth.Previous(tr.tc) != testhealth.Flaky {
		return
	}
	rc.asked = p.c.RecoveryRuns(tr.tc)
	last := tr.lastFailure
	if f := tr.tc.Flake; f != nil && f.At.After(last) {
		last = f.At
	}
	// An hour of slack: the reclassification runs hourly here.
	due := last.Add(time.Duration(p.s.RecoveryDays)*testhealth.Day + time.Hour)
	if tr.clean > rc.asked && now.After(due) {
		rc.late = true
	}
}
