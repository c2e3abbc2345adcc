package queuesvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/tenancy"
	"github.com/mainguard/mainguard/shared/testhealth"
)

// GitHub is what the driver asks of GitHub; *github.Client implements it.
type GitHub interface {
	PullRequest(ctx context.Context, repo github.Repo, number int) (github.PullRequest, error)
	BranchHead(ctx context.Context, repo github.Repo, branch string) (string, error)
	RequiredChecks(ctx context.Context, repo github.Repo, branch string) ([]github.RequiredCheck, error)
	UpToDate(ctx context.Context, repo github.Repo, base, head string) (bool, error)
	BuildTestBranch(ctx context.Context, repo github.Repo, base string, heads []github.Head, tempBranch, finalBranch string) (string, error)
	PointTestBranch(ctx context.Context, repo github.Repo, sha, branch string) error
	Checks(ctx context.Context, repo github.Repo, sha string) ([]github.Check, error)
	Merge(ctx context.Context, repo github.Repo, number int, sha string, method github.MergeMethod) (string, error)
	SetStatus(ctx context.Context, repo github.Repo, sha, context, state, description, targetURL string) error
	DeleteBranch(ctx context.Context, repo github.Repo, branch string) error
	Surface // comments, labels, reactions, permissions, test pull requests (surface.go)
}

var _ GitHub = (*github.Client)(nil)

// Store is what the driver asks of the store; *store.Store implements it.
type Store interface {
	GetQueue(ctx context.Context, k store.QueueKey) (store.QueueRecord, error)
	SaveQueue(ctx context.Context, r store.QueueRecord, prev int64, ch store.QueueChanges) error
	DeleteQueue(ctx context.Context, k store.QueueKey, version int64) error
	ActiveQueues(ctx context.Context, cursor string, limit int32) ([]store.QueueRecord, string, error)
	SchedulerCursor(ctx context.Context) (string, error)
	SetSchedulerCursor(ctx context.Context, cursor string) error
	GetImpactedTargets(ctx context.Context, r store.QueueRecord, pr int, sha string) (store.ImpactedTargets, bool, error)
	TestBranchUploads(ctx context.Context, org string, repo repository.Ref, sha string, since time.Time) ([]store.Upload, error)
	GetRepo(ctx context.Context, org string, ref repository.Ref) (store.Repo, error)
	GetTestCases(ctx context.Context, org string, repo repository.Ref, ids []string) ([]testhealth.TestCase, error)
	QueueEntry(ctx context.Context, r store.QueueRecord, n int) (store.EntryRecord, error)
	PutQueueCommand(ctx context.Context, k store.QueueKey, c store.QueueCommand) error
	QueueWithCommands(ctx context.Context, k store.QueueKey) (store.QueueRecord, []store.QueueCommand, error)
	DropQueueCommands(ctx context.Context, k store.QueueKey, cmds []store.QueueCommand) error
	QueuesWithCommands(ctx context.Context, limit int32) ([]store.QueueKey, error)
	CommentStore // the PR comment's id (surface.go)
}

var _ Store = (*store.Store)(nil)

// Service advances queues. Its fields are set once; it is safe for
// concurrent use, and several drivers (Lambda copies) may step the same
// queue at once.
type Service struct {
	Store  Store
	GitHub GitHub
	Now    func() time.Time
	// NewID makes test run ids (uuids: they name the test branches).
	NewID func() string
	Log   *slog.Logger
	// DetailsURL, when set, is the http_details_url of an event about PR
	// number of queue k.
	DetailsURL func(k store.QueueKey, pr int) string
	// MaxRounds bounds the step-save-perform rounds of one Advance
	// (default 6): each round feeds the previous round's build and merge
	// outcomes to the engine.
	MaxRounds int
	// PageSize is how many active queues one page of a Tick holds
	// (default 100); Parallel how many of them are advanced at once
	// (default 16); TickBudget how long a Tick goes on reading pages
	// (default 45 s, within the scheduled function's minute).
	PageSize   int32
	Parallel   int
	TickBudget time.Duration
	// AfterRecord is called once a client's command to queue k is
	// recorded (Record): Fold at once (the test service), or a
	// Background's Notify (the local server). nil deployed, where the
	// table's stream runs the fold-queue-commands function.
	AfterRecord func(ctx context.Context, k store.QueueKey)

	// Tenancy says which organization owns each repository: only the
	// owner's queues are stepped and fold commands (nil: every queue).
	Tenancy *tenancy.Tenancy

	noted sync.Map // queue and call → the GitHub failure last logged for it (notedFailure)
}

// owned reports whether queue k may act on its repository: its
// organization owns it (tenancy). A queue made before ownership existed
// on a repository of another, or left after the repository moved, acts on
// nothing of it: not stepped, its commands not folded. It says so in the
// log, once per renoteAfter.
func (d *Service) owned(ctx context.Context, k store.QueueKey) (bool, error) {
	if d.Tenancy == nil {
		return true, nil
	}
	ok, err := d.Tenancy.Owns(ctx, k.Org, k.Repo)
	if err != nil || ok {
		return ok, err
	}
	why := fmt.Errorf("organization %s does not own %s (an administrator claims it with mainguard repo claim, or records its App installation): the queue acts on nothing", k.Org, k.Repo)
	if d.news(k, "owner", why) {
		d.log().WarnContext(ctx, "merge queue: not the repository's owner", "queue", k.String(), "error", why.Error())
	}
	return false, nil
}

// notedFailure is a GitHub failure as last logged for one queue and call.
type notedFailure struct {
	err string
	at  time.Time
}

// renoteAfter is how often an unchanged GitHub failure is logged again:
// a queue retries it every tick, which is no news.
const renoteAfter = 10 * time.Minute

func (d *Service) rounds() int {
	if d.MaxRounds > 0 {
		return d.MaxRounds
	}
	return 6
}

func (d *Service) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func ghRepo(r repository.Ref) github.Repo { return github.Repo{Owner: r.Owner, Name: r.Name} }

// outcomes are what performing effects taught us, for the next step.
type outcomes struct {
	builds   []mergequeue.BuildResult
	merges   []mergequeue.MergeResult
	notified []string
}

func (o *outcomes) empty() bool {
	return len(o.builds) == 0 && len(o.merges) == 0 && len(o.notified) == 0
}

// add appends the outcomes of more effects.
func (o *outcomes) add(p outcomes) {
	o.builds, o.merges, o.notified = append(o.builds, p.builds...), append(o.merges, p.merges...), append(o.notified, p.notified...)
}

// facts are what gathering observations saw beyond the engine's
// observations: head branches (getSubmittedPullRequest by branch) and the
// checks of runs as GitHub shows them (testing details).
type facts struct {
	headRefs map[int]string
	checks   map[string][]store.RunCheck // run id →
}

// Command is a settings change applied to a queue (updateQueue): it returns
// the new snapshot and the engine's output, or an error that leaves the
// queue as it was. Clients' PR commands are recorded instead (Record).
type Command func(rec store.QueueRecord) (mergequeue.Snapshot, mergequeue.Output, error)

// maxCommandTries bounds retries of a command that lost the optimistic
// lock to a concurrent writer.
const maxCommandTries = 8

// Apply runs cmd on the current snapshot of queue k and saves the result,
// retrying on a concurrent change; then performs its effects and advances
// the queue. Errors advancing are logged, not returned: the command is
// done, and the scheduler will advance the queue again.
func (d *Service) Apply(ctx context.Context, k store.QueueKey, cmd Command) (store.QueueRecord, error) {
	var (
		next store.QueueRecord
		out  mergequeue.Output
	)
	err := d.retry(ctx, k, func(rec store.QueueRecord, _ []store.QueueCommand) error {
		s2, o, err := cmd(rec)
		if err != nil {
			return err
		}
		var trans []mergequeue.TransitionRecord
		out = o
		next, trans = rec.Advance(s2, o.Transitions)
		return d.save(ctx, next, rec.Snapshot.Version, o, facts{}, trans, nil)
	})
	if err != nil {
		return store.QueueRecord{}, err
	}
	if err := d.advance(ctx, next, d.perform(ctx, k, out.Effects)); err != nil {
		d.log().WarnContext(ctx, "merge queue: advance after a command failed", "queue", k.String(), "error", err.Error())
	}
	return next, nil
}

// Delete deletes queue k once the engine allows it (mergequeue.Deletable)
// of the queue as its pending commands leave it (a pending submit keeps
// it), retrying on a concurrent change.
func (d *Service) Delete(ctx context.Context, k store.QueueKey) error {
	return d.retry(ctx, k, func(rec store.QueueRecord, cmds []store.QueueCommand) error {
		if err := mergequeue.Deletable(d.view(rec, cmds).Snapshot); err != nil {
			return err
		}
		if err := d.Store.DeleteQueue(ctx, k, rec.Snapshot.Version); err != nil {
			return err
		}
		return d.Store.DropQueueCommands(ctx, k, cmds)
	})
}

// retry is the one optimistic-lock loop of Apply and Delete: it reads
// queue k with its pending commands (one Query) and runs write on them,
// again on the queue as it then is when write met a concurrent change
// (errs.Conflict), at most maxCommandTries times more.
func (d *Service) retry(ctx context.Context, k store.QueueKey, write func(rec store.QueueRecord, cmds []store.QueueCommand) error) error {
	for try := 0; ; try++ {
		rec, cmds, err := d.Store.QueueWithCommands(ctx, k)
		if err != nil {
			return err
		}
		err = write(rec, cmds)
		if errs.Is(err, errs.Conflict) && try < maxCommandTries {
			continue
		}
		return err
	}
}

// Advance steps queue k until it settles (or MaxRounds): observe, step,
// save, perform, and again with the outcomes.
func (d *Service) Advance(ctx context.Context, k store.QueueKey) error {
	rec, err := d.Store.GetQueue(ctx, k)
	if err != nil {
		return err
	}
	return d.advance(ctx, rec, outcomes{})
}

// advance is Advance from rec, with the outcomes of effects performed
// since rec was saved.
func (d *Service) advance(ctx context.Context, rec store.QueueRecord, carry outcomes) error {
	if ok, err := d.owned(ctx, rec.Key); err != nil || !ok {
		return err
	}
	var req requirements // read once for all rounds: they do not change in a moment
	for round := 0; round < d.rounds(); round++ {
		if round > 0 {
			var err error
			if rec, err = d.Store.GetQueue(ctx, rec.Key); err != nil {
				return err
			}
		}
		if !rec.Active() && carry.empty() {
			return nil
		}
		obs, f := d.observe(ctx, rec, &req)
		obs.Builds, obs.Merges, obs.Notified = carry.builds, carry.merges, carry.notified
		ev, err := d.evidence(ctx, rec)
		if err != nil {
			// No step on a half-read: the next tick steps again. Outcomes
			// carried are not lost: a build is asked again, and a merge is
			// seen on the PR.
			return err
		}
		obs.Evidence = ev
		s2, out := mergequeue.Step(rec.Snapshot, obs, d.Now(), d.NewID)
		if unchanged(rec.Snapshot, s2, out) {
			return nil
		}
		next, trans := rec.Advance(s2, out.Transitions)
		err = d.save(ctx, next, rec.Snapshot.Version, out, f, trans, nil)
		if errs.Is(err, errs.Conflict) {
			continue // another driver won: step again on its snapshot, keeping our outcomes
		}
		if err != nil {
			return err
		}
		carry = d.perform(ctx, rec.Key, out.Effects)
		if carry.empty() && !newlyAwaiting(rec.Snapshot, next.Snapshot) {
			return nil
		}
	}
	return nil
}

// newlyAwaiting reports whether a step left runs waiting for test
// health's evidence that were not before: the next round looks it up at
// once rather than a tick later.
func newlyAwaiting(before, after mergequeue.Snapshot) bool {
	old := map[string]bool{}
	for _, r := range mergequeue.EvidenceWanted(before) {
		old[r.ID] = true
	}
	for _, r := range mergequeue.EvidenceWanted(after) {
		if !old[r.ID] {
			return true
		}
	}
	return false
}

// unchanged reports whether a step changed nothing worth a write.
func unchanged(before, after mergequeue.Snapshot, out mergequeue.Output) bool {
	return len(out.Effects) == 0 && len(out.Transitions) == 0 && len(out.Entries) == 0 && len(out.Runs) == 0 &&
		before.TargetHead == after.TargetHead && before.BaseEpoch == after.BaseEpoch &&
		before.ProtectionKnown == after.ProtectionKnown && slices.Equal(before.ProtectionContexts, after.ProtectionContexts) &&
		reflect.DeepEqual(before.Queue, after.Queue)
}

// requirements are the required checks of a queue's branch as one
// advance read them (its first round that needed them).
type requirements struct {
	read   bool
	checks []github.RequiredCheck
	err    error
}

// observe gathers, after the previous effects, only what the step needs:
// the target head, the required checks of branch protection and rulesets
// when the queue names no required statuses, every submitted PR, and the
// checks of built runs in progress. Whatever GitHub does not answer is
// left out: the engine reads absent observations as "nothing new".
func (d *Service) observe(ctx context.Context, rec store.QueueRecord, req *requirements) (mergequeue.Observations, facts) {
	s := rec.Snapshot
	repo := ghRepo(rec.Key.Repo)
	var obs mergequeue.Observations
	f := facts{headRefs: map[int]string{}, checks: map[string][]store.RunCheck{}}
	if head, err := d.GitHub.BranchHead(ctx, repo, s.Queue.Branch); err == nil {
		obs.TargetHeadSHA = head
	} else {
		d.noteGitHub(ctx, rec.Key, "read target head", err)
	}
	// required binds the checks a branch requires to their Apps: only the
	// App's own status or check run of that name counts. Without it this
	// round (GitHub did not answer), checks are not read: another App's
	// check must not pass a run for want of knowing.
	var required []github.RequiredCheck
	knowRequired := true
	if s.Queue.RequiredStatuses == nil {
		if !req.read {
			req.checks, req.err = d.GitHub.RequiredChecks(ctx, repo, s.Queue.Branch)
			req.read = true
			if req.err != nil {
				d.noteGitHub(ctx, rec.Key, "read the required checks of branch protection and rulesets", req.err)
			}
		}
		if req.err == nil {
			obs.BranchProtection = &mergequeue.BranchProtection{Contexts: github.Contexts(req.checks)}
			required = req.checks
		} else {
			knowRequired = false
		}
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if !e.Active() {
			continue
		}
		pr, err := d.GitHub.PullRequest(ctx, repo, e.PRNumber)
		if err != nil {
			d.noteGitHub(ctx, rec.Key, "read pull request", err)
			continue
		}
		o := mergequeue.PRObservation{
			Number: pr.Number, HeadSHA: pr.HeadSHA, BaseBranch: pr.BaseRef, Draft: pr.Draft,
			Mergeability: mergequeue.Mergeability(pr.Mergeability), Title: pr.Title, Author: pr.Author,
			State: mergequeue.PROpen,
		}
		switch {
		case pr.Merged:
			o.State, o.MergeSHA = mergequeue.PRMerged, pr.MergeCommitSHA
		case !pr.Open:
			o.State = mergequeue.PRClosed
		}
		obs.PRs = append(obs.PRs, o)
		f.headRefs[pr.Number] = pr.HeadRef
		if t, ok := d.targets(ctx, rec, e, pr.HeadSHA); ok {
			obs.Targets = append(obs.Targets, t)
		}
	}
	if !knowRequired {
		return obs, f
	}
	obs.Direct = d.direct(ctx, rec, obs, required)
	for i := range s.Runs {
		r := &s.Runs[i]
		if r.Status != mergequeue.RunInProgress || r.HeadSHA == "" {
			continue
		}
		checks, err := d.GitHub.Checks(ctx, repo, r.HeadSHA)
		if err != nil {
			d.noteGitHub(ctx, rec.Key, "read checks", err)
			continue
		}
		states, ids := collapse(github.FromRequiredApps(required, checks))
		obs.Checks = append(obs.Checks, mergequeue.RunChecks{RunID: r.ID, SHA: r.HeadSHA, Checks: states, IDs: ids})
		raw := make([]store.RunCheck, len(checks))
		for j, c := range checks {
			raw[j] = store.RunCheck{Kind: c.Kind, Name: c.Name, State: c.State, Status: c.Status, Conclusion: c.Conclusion, URL: c.URL}
		}
		f.checks[r.ID] = raw
	}
	return obs, f
}

// direct asks GitHub what direct merge needs to know of its candidate
// (mergequeue.DirectMergeCandidate): whether the PR's head contains the
// target head just observed, and the checks on its head (of the Apps
// required bind them to). Nil when there is no candidate or GitHub did not
// answer.
func (d *Service) direct(ctx context.Context, rec store.QueueRecord, obs mergequeue.Observations, required []github.RequiredCheck) *mergequeue.DirectObservation {
	pr, head, ok := mergequeue.DirectMergeCandidate(rec.Snapshot, obs.PRs)
	if !ok || obs.TargetHeadSHA == "" {
		return nil
	}
	repo := ghRepo(rec.Key.Repo)
	upToDate, err := d.GitHub.UpToDate(ctx, repo, obs.TargetHeadSHA, head)
	if err != nil {
		d.noteGitHub(ctx, rec.Key, "compare a pull request with the target branch", err)
		return nil
	}
	o := &mergequeue.DirectObservation{PRNumber: pr, HeadSHA: head, TargetSHA: obs.TargetHeadSHA, UpToDate: upToDate}
	if !upToDate {
		return o // its checks do not matter
	}
	checks, err := d.GitHub.Checks(ctx, repo, head)
	if err != nil {
		d.noteGitHub(ctx, rec.Key, "read checks", err)
		return nil
	}
	o.Checks, _ = collapse(github.FromRequiredApps(required, checks))
	return o
}

// targets reads the impacted targets set for e's PR at head, when the
// queue is (or is switching to) PARALLEL and the engine does not hold them
// for that head yet. Once found they are not read again for that head;
// until CI sets them, each observation reads again (up to MaxRounds per
// advance).
func (d *Service) targets(ctx context.Context, rec store.QueueRecord, e *mergequeue.Entry, head string) (mergequeue.TargetsObservation, bool) {
	q := rec.Snapshot.Queue
	if (q.Mode != mergequeue.ModeParallel && q.NextMode != mergequeue.ModeParallel) || head == "" ||
		(e.Targets != nil && e.TargetsSHA == head) {
		return mergequeue.TargetsObservation{}, false
	}
	t, found, err := d.Store.GetImpactedTargets(ctx, rec, e.PRNumber, head)
	if err != nil {
		d.log().WarnContext(ctx, "merge queue: cannot read impacted targets; the queue retries later",
			"queue", rec.Key.String(), "pr", e.PRNumber, "error", err.Error())
		return mergequeue.TargetsObservation{}, false
	}
	if !found {
		return mergequeue.TargetsObservation{}, false
	}
	return mergequeue.TargetsObservation{PRNumber: e.PRNumber, HeadSHA: head, Targets: mergequeue.NewTargets(t.All, t.Targets)}, true
}

// collapse reduces the statuses and check runs on a commit to one state
// per name, as branch protection judges them: a failure of a name wins
// over its success, a success over a pending one. ids identify the result
// that decided each state.
func collapse(checks []github.Check) (states, ids map[string]string) {
	out := make(map[string]string, len(checks))
	ids = make(map[string]string, len(checks))
	rank := func(s string) int {
		switch mergequeue.NormalizeCheck(s) {
		case mergequeue.CheckFailure:
			return 2
		case mergequeue.CheckSuccess:
			return 1
		}
		return 0
	}
	for _, c := range checks {
		state := c.State
		if c.Kind == github.KindCheckRun {
			state = c.Status
			if c.Status == "completed" {
				state = c.Conclusion
				if state == "stale" || state == "" {
					state = "pending" // GitHub waits for a new run
				}
			}
		}
		if prev, ok := out[c.Name]; !ok || rank(state) > rank(prev) {
			out[c.Name] = state
			ids[c.Name] = c.Kind + ":" + strconv.FormatInt(c.ID, 10)
		}
	}
	return out, ids
}

// noteGitHub logs that GitHub did not answer a call of a queue's step:
// once per change of failure (or every renoteAfter while it lasts), not
// once per tick.
func (d *Service) noteGitHub(ctx context.Context, k store.QueueKey, what string, err error) {
	if !d.news(k, what, err) {
		return
	}
	retry, after := github.Retryable(err)
	d.log().InfoContext(ctx, "merge queue: GitHub did not answer; the queue retries later",
		"queue", k.String(), "what", what, "retryable", retry, "after", after.String(), "error", err.Error())
}

// news reports whether err, the failure of what on queue k, is worth
// logging: not the same failure logged for it within renoteAfter.
func (d *Service) news(k store.QueueKey, what string, err error) bool {
	now := time.Now()
	if d.Now != nil {
		now = d.Now()
	}
	key := k.String() + "\x00" + what
	if prev, ok := d.noted.Load(key); ok {
		if p := prev.(notedFailure); p.err == err.Error() && now.Sub(p.at) < renoteAfter {
			return false
		}
	}
	d.noted.Store(key, notedFailure{err: err.Error(), at: now})
	return true
}

// save writes the snapshot with its events (outbox), entries, runs and
// transitions (the records of the metrics, from store.QueueRecord.Advance),
// deleting the commands it folded.
func (d *Service) save(ctx context.Context, rec store.QueueRecord, prev int64, out mergequeue.Output, f facts, trans []mergequeue.TransitionRecord, folded []store.QueueCommand) error {
	ch := store.QueueChanges{Entries: out.Entries, HeadRefs: f.headRefs, Transitions: trans, Folded: folded}
	for _, e := range out.Effects {
		if e.Kind != mergequeue.EffectEvent {
			continue
		}
		ev := *e.Event
		if d.DetailsURL != nil {
			ev.HTTPDetailsURL = d.DetailsURL(rec.Key, ev.PRNumber)
		}
		w := wireEvent{Event: ev, Timestamp: ev.Timestamp.UTC().Format(eventTimeFormat)}
		var payload []byte
		var err error
		switch {
		case ev.Autopilot != nil:
			payload, err = json.Marshal(autopilotEvent(w))
		case len(ev.PRNumbers) > 0:
			payload, err = json.Marshal(wireBatchEvent{wireEvent: w})
		default:
			payload, err = json.Marshal(w)
		}
		if err != nil {
			return errs.Wrap(errs.Internal, err, "internal error")
		}
		ch.Events = append(ch.Events, store.Event{ID: EventID(ev.ID), Type: ev.Type, Payload: string(payload), CreatedAt: ev.Timestamp})
	}
	for _, r := range out.Runs {
		ch.Runs = append(ch.Runs, store.RunRecordMQ{Run: r, Checks: f.checks[r.ID]})
	}
	return d.Store.SaveQueue(ctx, rec, prev, ch)
}

// eventTimeFormat is contract 0's timestamp: RFC 3339 in UTC with
// milliseconds, as every other payload writes it.
const eventTimeFormat = "2006-01-02T15:04:05.000Z"

// wireEvent is an engine event as delivered. Its timestamp, at a shallower
// depth, replaces the embedded one: time.Time's own JSON drops a zero
// fraction ("01:33:50Z"), which the contract's format does not.
type wireEvent struct {
	mergequeue.Event
	Timestamp string `json:"timestamp"`
}

// wireBatchEvent is a pull_request_batch.* event as delivered: it names
// its pull requests in pr_numbers and has no pr_number or author (contract
// 4); the nil fields, at a shallower depth, hide the embedded ones.
type wireBatchEvent struct {
	wireEvent
	PRNumber *struct{} `json:"pr_number,omitempty"`
	Author   *struct{} `json:"author,omitempty"`
}

// wireAutopilotEvent is a merge_queue.autopilot_changed event as
// delivered (ours): the queue, the change and the estimates it was made
// on. It concerns no pull request, so it has no pr_number, author,
// action or status.
type wireAutopilotEvent struct {
	Type           string          `json:"type"`
	Timestamp      string          `json:"timestamp"`
	Repository     repository.Ref  `json:"repository"`
	TargetBranch   string          `json:"target_branch"`
	HTTPDetailsURL string          `json:"http_details_url,omitempty"`
	Autopilot      wireAutopilotCh `json:"autopilot"`
}

type wireAutopilotCh struct {
	Concurrency          wireFromTo `json:"concurrency"`
	BatchSize            wireFromTo `json:"batch_size"`
	Reason               string     `json:"reason"`
	BadPRRate            float64    `json:"bad_pr_rate"`
	FlakeRate            float64    `json:"flake_rate"`
	RunDurationSeconds   float64    `json:"run_duration_seconds"`
	PullRequestsObserved int        `json:"pull_requests_observed"`
	RunsObserved         int        `json:"runs_observed"`
}

type wireFromTo struct {
	From int `json:"from"`
	To   int `json:"to"`
}

func autopilotEvent(w wireEvent) wireAutopilotEvent {
	c := w.Autopilot
	return wireAutopilotEvent{
		Type: w.Type, Timestamp: w.Timestamp, Repository: w.Repository, TargetBranch: w.TargetBranch, HTTPDetailsURL: w.HTTPDetailsURL,
		Autopilot: wireAutopilotCh{
			Concurrency: wireFromTo{c.FromConcurrency, c.ToConcurrency}, BatchSize: wireFromTo{c.FromBatch, c.ToBatch},
			Reason: c.Line, BadPRRate: c.BadRate, FlakeRate: c.FlakeRate, RunDurationSeconds: c.RunTime.Seconds(),
			PullRequestsObserved: c.PRs, RunsObserved: c.Runs,
		},
	}
}

// EventID is the outbox id (and webhook-id) of an engine event: derived
// from the engine's deterministic key, so a step replayed by a second
// driver names the same event and the outbox keeps it once.
func EventID(engineID string) string {
	return "msg_" + strings.NewReplacer("event/", "", "/", "_", "-", "").Replace(engineID)
}

// perform carries out the effects other than events, in order, and
// returns the build, merge and notice outcomes. Errors are not returned: a lost
// status or branch deletion is harmless, and a build or merge that did not
// happen is repeated by the engine.
func (d *Service) perform(ctx context.Context, k store.QueueKey, effects []mergequeue.Effect) outcomes {
	repo := ghRepo(k.Repo)
	var o outcomes
	for _, e := range effects {
		switch e.Kind {
		case mergequeue.EffectStartRun:
			sr := e.StartRun
			heads := make([]github.Head, len(sr.Heads))
			for i, h := range sr.Heads {
				heads[i] = github.Head{PR: h.PRNumber, SHA: h.HeadSHA}
			}
			sha, err := d.buildTestBranch(ctx, repo, sr, heads)
			if err == nil && sr.OpenTestPR {
				// CI runs on the pull request: a build without it is no
				// build, and is asked again (both steps are idempotent).
				if perr := d.openTestPR(ctx, k, sr); perr != nil {
					if retry, _ := github.Retryable(perr); retry {
						err = perr
					} else {
						d.noteGitHub(ctx, k, "open the test pull request", perr)
					}
				}
			}
			var conflict *github.ConflictError
			switch {
			case err == nil:
				o.builds = append(o.builds, mergequeue.BuildResult{RunID: sr.RunID, HeadSHA: sha})
			case errors.As(err, &conflict):
				o.builds = append(o.builds, mergequeue.BuildResult{RunID: sr.RunID, ConflictPR: conflict.PR})
			default:
				d.noteGitHub(ctx, k, "build test branch", err)
			}
		case mergequeue.EffectMergePR:
			m := e.MergePR
			sha, err := d.GitHub.Merge(ctx, repo, m.PRNumber, m.SHA, github.MergeMethod(m.Method))
			switch retry, _ := github.Retryable(err); {
			case err == nil:
				o.merges = append(o.merges, mergequeue.MergeResult{Key: e.Key, PRNumber: m.PRNumber, Merged: true, SHA: sha})
			case retry:
				d.noteGitHub(ctx, k, "merge", err)
			default:
				// A refusal: the engine believes it only if the next
				// observation shows the PR unmerged.
				o.merges = append(o.merges, mergequeue.MergeResult{Key: e.Key, PRNumber: m.PRNumber, Message: errs.MessageOf(err)})
			}
		case mergequeue.EffectNotify:
			if d.notify(ctx, k, e.Notify) {
				o.notified = append(o.notified, e.Key)
			}
		case mergequeue.EffectSetStatus:
			st := e.SetStatus
			target := ""
			if d.DetailsURL != nil {
				target = d.DetailsURL(k, st.PRNumber) // the PR's page, the status's Details link
			}
			if err := d.GitHub.SetStatus(ctx, repo, st.SHA, st.Context, st.State, st.Description, target); err != nil {
				d.noteGitHub(ctx, k, "set status", err)
			}
		case mergequeue.EffectDeleteBranches:
			if e.DeleteBranches.CloseTestPR && len(e.DeleteBranches.Branches) > 0 {
				if err := d.GitHub.ClosePRsOf(ctx, repo, e.DeleteBranches.Branches[0]); err != nil {
					d.noteGitHub(ctx, k, "close the test pull request", err)
				}
			}
			for _, b := range e.DeleteBranches.Branches {
				if err := d.GitHub.DeleteBranch(ctx, repo, b); err != nil {
					d.noteGitHub(ctx, k, "delete branch", err)
				}
			}
		}
	}
	return o
}

// buildTestBranch builds a run's test branch, or points it at the head
// its retry reuses while that commit exists.
func (d *Service) buildTestBranch(ctx context.Context, repo github.Repo, sr *mergequeue.StartRun, heads []github.Head) (string, error) {
	if sr.ReuseSHA != "" {
		err := d.GitHub.PointTestBranch(ctx, repo, sr.ReuseSHA, sr.TestBranch)
		if !errs.Is(err, errs.NotFound) {
			return sr.ReuseSHA, err
		}
	}
	return d.GitHub.BuildTestBranch(ctx, repo, sr.BaseSHA, heads, sr.TempBranch, sr.TestBranch)
}

// Tick advances every active queue, a page at a time, each page's queues
// on up to Parallel goroutines, until all were visited or TickBudget is
// spent; it then starts where the previous tick stopped, so that with more
// queues than one tick can step none waits behind the others for ever. It
// reports how many queues it visited. A queue that fails is logged and
// left for the next tick; the error returned is the store's, when a page
// itself could not be read. In-process parallelism rather than one
// invocation per queue: a step is a few store and GitHub calls, mostly
// waiting, so 16 at once in one function cover 1,000 queues in well under
// its minute, with no fan-out to pay for or to lose events in.
func (d *Service) Tick(ctx context.Context) (int, error) {
	size := d.PageSize
	if size <= 0 {
		size = 100
	}
	budget := d.TickBudget
	if budget <= 0 {
		budget = 45 * time.Second
	}
	parallel := d.Parallel
	if parallel <= 0 {
		parallel = 16
	}
	start := time.Now() // the function's own time, not the queues' clock
	if _, err := d.FoldPending(ctx, size); err != nil {
		d.log().WarnContext(ctx, "merge queue: pending commands not read; next tick retries", "error", err.Error())
	}
	from, err := d.Store.SchedulerCursor(ctx)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	cursor, wrapped, visited := from, from == "", 0
	for {
		qs, next, err := d.Store.ActiveQueues(ctx, cursor, size)
		if err != nil {
			return visited, err
		}
		var page []store.QueueRecord
		for _, q := range qs {
			if k := q.Key.String(); !seen[k] {
				seen[k] = true
				page = append(page, q)
			}
		}
		d.advanceAll(ctx, page, parallel)
		visited += len(page)
		cursor = next
		if len(page) < len(qs) { // wrapped around to queues stepped already
			cursor = ""
			break
		}
		if next == "" {
			if wrapped {
				break
			}
			wrapped = true // started mid-way: the queues before it remain
		}
		if time.Since(start) > budget {
			break
		}
	}
	if cursor != from {
		if err := d.Store.SetSchedulerCursor(ctx, cursor); err != nil {
			return visited, err
		}
	}
	return visited, nil
}

// advanceAll advances queues on up to parallel goroutines.
func (d *Service) advanceAll(ctx context.Context, qs []store.QueueRecord, parallel int) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, q := range qs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := d.advance(ctx, q, outcomes{}); err != nil {
				d.log().WarnContext(ctx, "merge queue: advance failed; next tick retries", "queue", q.Key.String(), "error", err.Error())
			}
		})
	}
	wg.Wait()
}
