package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// queuePath is what a queue page's path names: the queue, and a PR of it
// when the path ends in /pr/{n}.
type queuePath struct {
	Repo   repository.Ref // without the host, which the path does not name
	Branch string
	PR     int // 0: the queue's page
}

// parseQueuePath reads /{org}/merge-queue/{owner}/{name}/{branch}[/pr/{n}].
// A branch may hold slashes, as the path does or escaped (%2F): the API
// adapter hands the escaped path on as it came, so it is unescaped here.
func parseQueuePath(r *http.Request) (queuePath, error) {
	p := queuePath{Repo: repository.Ref{Owner: r.PathValue("owner"), Name: r.PathValue("name")}}
	rest := r.PathValue("rest")
	if i := strings.LastIndex(rest, "/pr/"); i > 0 {
		n, err := strconv.Atoi(rest[i+len("/pr/"):])
		if err == nil && n > 0 {
			p.PR, rest = n, rest[:i]
		}
	}
	for _, s := range []*string{&p.Repo.Owner, &p.Repo.Name, &rest} {
		if v, err := url.PathUnescape(*s); err == nil {
			*s = v
		}
	}
	p.Branch = strings.Trim(rest, "/")
	if p.Branch == "" {
		return p, errs.E(errs.NotFound, "no branch in the path")
	}
	return p, nil
}

// queueView reads the queue the path names as the API shows it (pending
// commands applied): one Query per host tried (github.com first). A
// repository the organization does not own has no queue here, as for the
// API (tenancy.Check), and one the person cannot read on GitHub none
// either (seeRepo).
func (w *Web) queueView(ctx context.Context, s session, p queuePath) (store.QueueRecord, error) {
	ref := repository.Ref{Host: w.Hosts[0], Owner: p.Repo.Owner, Name: p.Repo.Name}
	if err := w.Queues.Tenancy.Check(ctx, s.Org, ref); err != nil {
		return store.QueueRecord{}, err
	}
	if err := w.seeRepo(ctx, s, ref); err != nil {
		return store.QueueRecord{}, err
	}
	var err error
	for _, host := range w.Hosts {
		k := store.QueueKey{Org: s.Org, Repo: repository.Ref{Host: host, Owner: p.Repo.Owner, Name: p.Repo.Name}, Branch: p.Branch}
		var rec store.QueueRecord
		if rec, err = w.Queues.View(ctx, k); !errs.Is(err, errs.NotFound) {
			return rec, err
		}
	}
	return store.QueueRecord{}, err
}

// queueOrPR serves GET /{org}/merge-queue/…: the queue's page or a PR's.
func (w *Web) queueOrPR(rw http.ResponseWriter, r *http.Request, s session) error {
	p, err := parseQueuePath(r)
	if err != nil {
		return err
	}
	if p.PR > 0 {
		return w.prPage(rw, r, s, p)
	}
	return w.queuePage(rw, r, s, p)
}

type queuePage struct {
	Repo, Branch, GitHub string
	figures
	Parallel bool // PARALLEL mode: the page says what a PR is tested on
	Paused   bool
	Settings []setting
	Enqueued []entryRow
	NotReady []entryRow
	Finished []entryRow
	// How the estimates were made.
	ETARuns               int
	ETARun                string
	Concurrency           int
	DepthChart, WaitChart chart
	// Autopilot is what the autopilot chose and why, nil while it is off.
	Autopilot *autopilotView
}

// autopilotView is the autopilot on a queue's page: its choice, its
// estimates, and its changes, newest first, a line each.
type autopilotView struct {
	Choice, Estimates string
	Changes           []setting // when (UTC), what and why
}

// autopilotOf is the autopilot's part of the page, nil while it is off.
func autopilotOf(snap mergequeue.Snapshot) *autopilotView {
	a := snap.Autopilot
	if !snap.Queue.Autopilot || a == nil {
		return nil
	}
	l, est, b := snap.Limits(), a.Estimates(), snap.Queue.WithRetryDefaults().AutopilotSettings
	batch := "no batching"
	if l.Batch > 1 {
		batch = fmt.Sprintf("batches of %d", l.Batch)
	}
	v := &autopilotView{
		Choice: fmt.Sprintf("concurrency %d, %s (bounds: concurrency ≤ %d, batch size ≤ %d, CI runs per merge ≤ %g)",
			l.Concurrency, batch, b.AutopilotMaxConcurrency, b.AutopilotMaxBatch, b.AutopilotMaxCiRunsPerMerge),
		Estimates: fmt.Sprintf("bad-PR rate %.1f%% over the last %d pull requests, flake rate %.1f%% over the last %d runs, run time %s",
			100*est.BadRate, est.PRs, 100*est.FlakeRate, est.Runs, duration(est.RunTime)),
	}
	for _, c := range slices.Backward(a.Changes) {
		v.Changes = append(v.Changes, setting{Name: c.At.UTC().Format(time.DateTime), Value: c.Line})
	}
	return v
}

// setting is one of a queue's settings; an enum value is in words, its
// code (what updateQueue takes) in Code.
type setting struct{ Name, Value, Code string }

type entryRow struct {
	N             int
	Href, GitHub  string
	Title, Author string
	State, Reason coded
	Position      int
	Since         string // time in state
	At            stamp  // when it reached its state
	at            time.Time
	Priority, Run string
	ETA           string
	Active        bool
}

// queuePage serves a queue's page.
//
// DynamoDB: 1 Query (the queue and its pending commands; one more on a
// GitHub Enterprise host when github.com has no such queue). The PRs,
// runs, transitions and finished PRs of the last 24 hours all come from
// the queue's snapshot.
func (w *Web) queuePage(rw http.ResponseWriter, r *http.Request, s session, p queuePath) error {
	rec, err := w.queueView(r.Context(), s, p)
	if err != nil {
		return err
	}
	now, snap, k := w.Now(), rec.Snapshot, rec.Key
	q := snap.Queue
	page := queuePage{
		Repo: k.Repo.String(), Branch: k.Branch, GitHub: w.onHost(k.Repo),
		figures: figuresOf(snap, now), Paused: q.State == mergequeue.QueuePaused,
		Parallel: q.Mode == mergequeue.ModeParallel,
		Settings: settingsOf(q), Concurrency: snap.Limits().Concurrency,
		DepthChart: depthChart(snap, now), WaitChart: waitChart(snap, now), Autopilot: autopilotOf(snap),
	}
	runs := testingDurations(snap, now)
	run := median(runs)
	page.ETARuns, page.ETARun = len(runs), duration(run)
	// The statuses that failed the runs the snapshot still holds, to say
	// a failure's reason.
	failed := map[string][]string{}
	for _, r := range snap.Runs {
		failed[r.ID] = r.FailedStatuses()
	}
	row := func(e mergequeue.Entry) entryRow {
		return entryRow{
			N: e.PRNumber, Href: prHref(s.Org, k.Repo, k.Branch, e.PRNumber), GitHub: w.gitHubPR(k.Repo, e.PRNumber),
			Title: e.PR.Title, Author: e.PR.Author, State: words(string(e.State)), Reason: reasonOf(e.Reason, failed[e.RunID]...),
			Since: duration(now.Sub(e.StateChangedAt)), At: stampOf(e.StateChangedAt, now), at: e.StateChangedAt,
			Priority: mergequeue.PriorityName(e.Priority), Run: runLabel(snap, e, k.Branch), Active: e.Active(),
		}
	}
	for i, e := range mergequeue.QueueOrder(snap) {
		rr := row(e)
		rr.Position = i + 1
		rr.ETA = "unknown"
		if len(runs) > 0 {
			rr.ETA = duration(estimate(i, page.Concurrency, run, e, now))
		}
		page.Enqueued = append(page.Enqueued, rr)
	}
	cut := now.Add(-window)
	for _, e := range snap.Entries {
		switch {
		case e.State == mergequeue.NotReady:
			page.NotReady = append(page.NotReady, row(e))
		case e.State.Terminal() && !e.StateChangedAt.Before(cut):
			page.Finished = append(page.Finished, row(e))
		}
	}
	slices.SortFunc(page.NotReady, func(a, b entryRow) int { return a.N - b.N })
	slices.SortFunc(page.Finished, func(a, b entryRow) int { return b.at.Compare(a.at) })
	title := "Queue " + k.Repo.Owner + "/" + k.Repo.Name + " " + k.Branch
	return w.render(rw, r, http.StatusOK, &s, view{Title: title,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}}}, page)
}

// runLabel says what an entry is tested on: the target branch alone, or
// the PRs ahead of it in its run (in PARALLEL mode only those whose
// impacted targets overlap its own), and its batch and bisection.
func runLabel(snap mergequeue.Snapshot, e mergequeue.Entry, branch string) string {
	if e.RunID == "" || !e.Active() {
		return ""
	}
	i := slices.IndexFunc(snap.Runs, func(r mergequeue.Run) bool { return r.ID == e.RunID })
	if i < 0 {
		return ""
	}
	run := snap.Runs[i]
	var ahead []string
	under := 0
	for _, p := range run.PRs {
		if p.UnderTest {
			under++
		} else {
			ahead = append(ahead, "#"+strconv.Itoa(p.PRNumber))
		}
	}
	label := "on " + branch
	switch {
	case len(ahead) > 3:
		label = fmt.Sprintf("on %s and %d PRs ahead", branch, len(ahead))
	case len(ahead) > 0:
		label = "on " + branch + " with " + strings.Join(ahead, ", ")
	}
	if run.Direct {
		label = "its own head, on " + branch
	}
	if under > 1 {
		label += fmt.Sprintf(", batch of %d", under)
	}
	if run.Bisection {
		label += ", bisection"
	}
	return label
}

func settingsOf(q mergequeue.Queue) []setting {
	onOff := func(b bool) string { return map[bool]string{true: "on", false: "off"}[b] }
	statuses := "from branch protection"
	if q.RequiredStatuses != nil {
		statuses = strings.Join(q.RequiredStatuses, ", ")
		if statuses == "" {
			statuses = "none"
		}
	}
	batch := "off"
	if q.Batch {
		batch = fmt.Sprintf("on (at least %d PRs, or after %d min)", q.BatchingMinSize, q.BatchingMaxWaitTimeMinutes)
	}
	enum := func(name, code string) setting { return setting{name, words(code).Words, code} }
	retry := q.WithRetryDefaults().FlakyRetryPolicy
	out := []setting{
		enum("Mode", string(q.Mode)),
		{"Concurrency", strconv.Itoa(q.Concurrency), ""},
		{"Batching", batch, ""},
		{"Required statuses", statuses, ""},
		enum("Merge method", string(q.MergeMethod)),
		{"Testing timeout", fmt.Sprintf("%d min", q.TestingTimeoutMinutes), ""},
		{"Optimistic merge", onOff(q.CanOptimisticallyMerge), ""},
		{"Pending-failure depth", strconv.Itoa(q.PendingFailureDepth), ""},
		enum("Direct merge", string(q.DirectMergeMode)),
		{"Flaky retries", fmt.Sprintf("%d (%s)", q.FlakyRetries, strings.ToLower(words(string(retry)).Words)), string(retry)},
		{"Autopilot", onOff(q.Autopilot), ""},
	}
	return out
}

// queueAction serves the forms of a queue's page and of its PRs' pages:
// pause and resume the queue (updateQueue's state), cancel a PR, restart
// its tests or submit it again (the commands cancelPullRequest,
// restartTestsOnPullRequest and submitPullRequest record), then back to
// the page.
//
// DynamoDB: what the driver's Apply or Record makes (a Query and a
// conditional write), after the queue view's Query.
func (w *Web) queueAction(rw http.ResponseWriter, r *http.Request, s session) error {
	p, err := parseQueuePath(r)
	if err != nil {
		return err
	}
	rec, err := w.queueView(r.Context(), s, p)
	if err != nil {
		return err
	}
	k, back := rec.Key, queueHref(s.Org, rec.Key.Repo, rec.Key.Branch)
	action := r.PostFormValue("action")
	// Each action needs what the endpoint it stands for needs.
	endpoint := map[string]string{"pause": "update-queue", "resume": "update-queue", "cancel": "cancel-pull-request", "restart": "restart-tests-on-pull-request", "resubmit": "submit-pull-request"}[action]
	if endpoint != "" {
		if err := w.allow(r.Context(), s, k.Repo, api.ScopeOf(endpoint), actionNames[action]); err != nil {
			return err
		}
	}
	prCommands := map[string]string{"cancel": store.CommandCancel, "restart": store.CommandRestart, "resubmit": store.CommandSubmit}
	switch kind, isPR := prCommands[action]; {
	case p.PR == 0 && (action == "pause" || action == "resume"):
		state := map[string]string{"pause": string(mergequeue.QueuePaused), "resume": string(mergequeue.QueueRunning)}[action]
		_, err = w.Queues.Apply(r.Context(), k, func(rec store.QueueRecord) (mergequeue.Snapshot, mergequeue.Output, error) {
			return mergequeue.UpdateQueue(rec.Snapshot, mergequeue.QueuePatch{State: &state}, w.Now())
		})
	case p.PR > 0 && isPR:
		// A resubmission is submitPullRequest without a priority: the
		// default one, as the API gives it.
		err = w.Queues.Record(r.Context(), k, store.QueueCommand{Kind: kind, PR: p.PR})
		back = prHref(s.Org, k.Repo, k.Branch, p.PR)
	default:
		err = errs.E(errs.Invalid, "unknown action %q", action)
	}
	if err != nil {
		return err
	}
	http.Redirect(rw, r, back, http.StatusSeeOther)
	return nil
}

// actionNames name the queue pages' actions in refusals.
var actionNames = map[string]string{
	"pause": "Pausing the queue", "resume": "Resuming the queue",
	"cancel": "Cancelling a pull request", "restart": "Restarting a pull request's tests",
	"resubmit": "Resubmitting a pull request",
}

// duration spells d for a person: "45s", "12m", "3h 05m".
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
