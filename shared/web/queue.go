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
// commands applied): one Query per host tried (github.com first).
func (w *Web) queueView(ctx context.Context, org string, p queuePath) (store.QueueRecord, error) {
	var err error
	for _, host := range w.Hosts {
		k := store.QueueKey{Org: org, Repo: repository.Ref{Host: host, Owner: p.Repo.Owner, Name: p.Repo.Name}, Branch: p.Branch}
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

type setting struct{ Name, Value string }

type entryRow struct {
	N                            int
	Href, GitHub                 string
	Title, Author, State, Reason string
	Position                     int
	Since                        string // time in state
	At                           string // when it reached its state
	Priority, Run                string
	ETA                          string
	Active                       bool
}

// queuePage serves a queue's page.
//
// DynamoDB: 1 Query (the queue and its pending commands; one more on a
// GitHub Enterprise host when github.com has no such queue). The PRs,
// runs, transitions and finished PRs of the last 24 hours all come from
// the queue's snapshot.
func (w *Web) queuePage(rw http.ResponseWriter, r *http.Request, s session, p queuePath) error {
	rec, err := w.queueView(r.Context(), s.Org, p)
	if err != nil {
		return err
	}
	now, snap, k := w.Now(), rec.Snapshot, rec.Key
	q := snap.Queue
	page := queuePage{
		Repo: k.Repo.String(), Branch: k.Branch, GitHub: k.Repo.HTMLURL(),
		figures: figuresOf(snap, now), Paused: q.State == mergequeue.QueuePaused,
		Settings: settingsOf(q), Concurrency: snap.Limits().Concurrency,
		DepthChart: depthChart(snap, now), WaitChart: waitChart(snap, now), Autopilot: autopilotOf(snap),
	}
	runs := testingDurations(snap, now)
	run := median(runs)
	page.ETARuns, page.ETARun = len(runs), duration(run)
	row := func(e mergequeue.Entry) entryRow {
		return entryRow{
			N: e.PRNumber, Href: prHref(s.Org, k.Repo, k.Branch, e.PRNumber), GitHub: gitHubPR(k.Repo, e.PRNumber),
			Title: e.PR.Title, Author: e.PR.Author, State: string(e.State), Reason: e.Reason,
			Since: duration(now.Sub(e.StateChangedAt)), At: e.StateChangedAt.UTC().Format(time.DateTime),
			Priority: mergequeue.PriorityName(e.Priority), Run: runLabel(snap, e), Active: e.Active(),
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
	slices.SortFunc(page.Finished, func(a, b entryRow) int { return strings.Compare(b.At, a.At) })
	title := "Queue " + k.Repo.Owner + "/" + k.Repo.Name + " " + k.Branch
	return w.render(rw, r, http.StatusOK, "queue.html", &s, view{Title: title, Page: page,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}}})
}

// runLabel says which run an entry is in: its lane, and its batch when the
// run tests several PRs.
func runLabel(snap mergequeue.Snapshot, e mergequeue.Entry) string {
	if e.RunID == "" || !e.Active() {
		return ""
	}
	i := slices.IndexFunc(snap.Runs, func(r mergequeue.Run) bool { return r.ID == e.RunID })
	if i < 0 {
		return ""
	}
	run := snap.Runs[i]
	under := 0
	for _, p := range run.PRs {
		if p.UnderTest {
			under++
		}
	}
	label := fmt.Sprintf("lane %d", run.Lane)
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
	out := []setting{
		{"Mode", string(q.Mode)},
		{"Concurrency", strconv.Itoa(q.Concurrency)},
		{"Batching", batch},
		{"Required statuses", statuses},
		{"Merge method", string(q.MergeMethod)},
		{"Testing timeout", fmt.Sprintf("%d min", q.TestingTimeoutMinutes)},
		{"Optimistic merge", onOff(q.CanOptimisticallyMerge)},
		{"Pending-failure depth", strconv.Itoa(q.PendingFailureDepth)},
		{"Direct merge", string(q.DirectMergeMode)},
		{"Flaky retries", fmt.Sprintf("%d (%s)", q.FlakyRetries, q.WithRetryDefaults().FlakyRetryPolicy)},
		{"Autopilot", onOff(q.Autopilot)},
	}
	return out
}

// queueAction serves the forms of a queue's page and of its PRs' pages:
// pause and resume the queue (updateQueue's state), cancel a PR or restart
// its tests (the commands cancelPullRequest and
// restartTestsOnPullRequest record), then back to the page.
//
// DynamoDB: what the driver's Apply or Record makes (a Query and a
// conditional write), after the queue view's Query.
func (w *Web) queueAction(rw http.ResponseWriter, r *http.Request, s session) error {
	p, err := parseQueuePath(r)
	if err != nil {
		return err
	}
	rec, err := w.queueView(r.Context(), s.Org, p)
	if err != nil {
		return err
	}
	k, back := rec.Key, queueHref(s.Org, rec.Key.Repo, rec.Key.Branch)
	action := r.PostFormValue("action")
	switch {
	case p.PR == 0 && (action == "pause" || action == "resume"):
		state := map[string]string{"pause": string(mergequeue.QueuePaused), "resume": string(mergequeue.QueueRunning)}[action]
		_, err = w.Queues.Apply(r.Context(), k, func(rec store.QueueRecord) (mergequeue.Snapshot, mergequeue.Output, error) {
			return mergequeue.UpdateQueue(rec.Snapshot, mergequeue.QueuePatch{State: &state}, w.Now())
		})
	case p.PR > 0 && (action == "cancel" || action == "restart"):
		kind := map[string]string{"cancel": store.CommandCancel, "restart": store.CommandRestart}[action]
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
