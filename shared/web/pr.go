package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
)

// maxRuns bounds the runs a PR's page reads.
const maxRuns = 10

type prPage struct {
	N                     int
	Title, Author, Since  string
	State, Reason         coded
	Priority, QueueHref   string
	GitHub, Queue         string
	Active, Resubmittable bool
	Retries               int
	Timeline              []step
	MoreSteps             bool // earlier transitions are not shown
	Runs                  []runView
	MoreRuns              int
}

type step struct {
	At        stamp
	From, To  coded
	Reason    coded
	Run       string
	Bisection bool
}

type runView struct {
	ID                         string
	Status, Reason             coded
	Created, Ended             stamp
	TestBranch, TestBranchHref string
	HeadSHA, HeadHref          string
	Batch                      []runPR
	Bisection, Direct          bool
	BisectOf, RetryOf          string
	Checks                     []checkView
	Evidence                   []mergequeue.FailedTest
}

type runPR struct {
	N                 int
	Title, Href       string
	UnderTest, IsThis bool
}

type checkView struct{ Name, Kind, State, Href string }

// prPage serves a PR's page, the http_details_url of the queue's events:
// its timeline, each of its runs with branch, statuses and checks, batch
// and bisection membership and flaky-retry evidence.
//
// DynamoDB: 1 Query (the queue, as queuePage), 1 GetItem for the entry
// when the snapshot no longer holds it, 1 Query of its timeline, and 1
// GetItem per run shown (at most maxRuns): stored runs carry the checks'
// addresses.
func (w *Web) prPage(rw http.ResponseWriter, r *http.Request, s session, p queuePath) error {
	ctx := r.Context()
	rec, err := w.queueView(ctx, s, p)
	if err != nil {
		return err
	}
	stored, err := w.Store.QueueEntry(ctx, rec, p.PR)
	if err != nil {
		return err
	}
	e, k, now := stored.Entry, rec.Key, w.Now()
	page := prPage{
		N: e.PRNumber, Title: e.PR.Title, Author: e.PR.Author, State: words(string(e.State)),
		Since: duration(now.Sub(e.StateChangedAt)), Priority: mergequeue.PriorityName(e.Priority),
		QueueHref: queueHref(s.Org, k.Repo, k.Branch), GitHub: w.gitHubPR(k.Repo, e.PRNumber),
		Queue: k.Repo.Owner + "/" + k.Repo.Name + " " + k.Branch, Active: e.Active(), Retries: e.Retries,
		Resubmittable: e.State == mergequeue.Failed || e.State == mergequeue.Cancelled,
	}
	// The timeline: the PR's stored transitions (its latest
	// store.MaxTimeline, every submission's) and those the snapshot holds
	// that are not stored yet, and the runs they name.
	stepsOf, err := w.Store.PRTimeline(ctx, rec, e.PRNumber)
	if err != nil {
		return err
	}
	page.MoreSteps = len(stepsOf) == store.MaxTimeline
	last := int64(-1)
	if len(stepsOf) > 0 {
		last = stepsOf[len(stepsOf)-1].Seq
	}
	for _, t := range rec.Snapshot.Transitions {
		if t.PRNumber == e.PRNumber && t.Seq > last {
			stepsOf = append(stepsOf, t)
		}
	}
	var runIDs []string
	addRun := func(id string) {
		if id != "" && !slices.Contains(runIDs, id) {
			runIDs = append(runIDs, id)
		}
	}
	for _, t := range stepsOf {
		addRun(t.RunID)
	}
	addRun(e.RunID)
	slices.Reverse(runIDs) // newest first
	if len(runIDs) > maxRuns {
		page.MoreRuns, runIDs = len(runIDs)-maxRuns, runIDs[:maxRuns]
	}
	// The statuses that failed each run, to say a failure's reason: from
	// the stored runs, else from the snapshot's.
	failed := map[string][]string{}
	for _, r := range rec.Snapshot.Runs {
		failed[r.ID] = r.FailedStatuses()
	}
	for _, id := range runIDs {
		run, err := w.Store.QueueRun(ctx, s.Org, id)
		if errs.Is(err, errs.NotFound) {
			continue // expired with its queue's history
		}
		if err != nil {
			return err
		}
		failed[id] = run.Run.FailedStatuses()
		page.Runs = append(page.Runs, w.runView(s.Org, rec, run, e, now))
	}
	for _, t := range stepsOf {
		page.Timeline = append(page.Timeline, step{
			At: stampOf(t.At, now), From: words(string(t.From)), To: words(string(t.To)),
			Reason: reasonOf(t.Reason, failed[t.RunID]...), Run: t.RunID, Bisection: t.Bisection,
		})
	}
	// The entry's reason is its last transition's, whose run may no longer
	// be the entry's.
	run := e.RunID
	for _, t := range stepsOf {
		if t.Reason == e.Reason && t.RunID != "" {
			run = t.RunID
		}
	}
	page.Reason = reasonOf(e.Reason, failed[run]...)
	return w.render(rw, r, http.StatusOK, &s, view{
		Title:  "PR #" + strconv.Itoa(e.PRNumber) + " " + e.PR.Title,
		Crumbs: []crumb{{s.Org, orgHref(s.Org)}, {page.Queue, page.QueueHref}},
	}, page)
}

func (w *Web) runView(org string, rec store.QueueRecord, rr store.RunRecordMQ, e mergequeue.Entry, now time.Time) runView {
	run, k := rr.Run, rec.Key
	v := runView{
		ID: run.ID, Status: words(string(run.Status)), Reason: reasonOf(run.Reason, run.FailedStatuses()...),
		Created: stampOf(run.CreatedAt, now), Ended: stampOf(run.EndedAt, now),
		TestBranch: run.TestBranch, HeadSHA: run.HeadSHA,
		Bisection: run.Bisection || run.BisectOf != "", Direct: run.Direct, BisectOf: run.BisectOf, RetryOf: run.RetryOf,
	}
	if run.TestBranch != "" && run.Status == mergequeue.RunInProgress {
		// The queue deletes a test branch once its run ends: its commit
		// stays, linked below.
		v.TestBranchHref = w.gitHubTree(k.Repo, run.TestBranch)
	}
	if run.HeadSHA != "" {
		v.HeadHref = w.gitHubCommit(k.Repo, run.HeadSHA)
	}
	for _, p := range run.PRs {
		v.Batch = append(v.Batch, runPR{N: p.PRNumber, Title: p.Title, Href: prHref(org, k.Repo, k.Branch, p.PRNumber), UnderTest: p.UnderTest, IsThis: p.PRNumber == e.PRNumber})
	}
	seen := map[string]bool{}
	for _, c := range rr.Checks {
		state := strings.ToLower(c.State)
		if c.Kind == "check_run" {
			state = strings.ToLower(c.Status)
			if c.Conclusion != "" {
				state = strings.ToLower(c.Conclusion)
			}
		}
		href := c.URL
		if href == "" && run.HeadSHA != "" {
			href = w.gitHubCommit(k.Repo, run.HeadSHA)
		}
		v.Checks = append(v.Checks, checkView{Name: c.Name, Kind: c.Kind, State: state, Href: href})
		seen[c.Name] = true
	}
	// Required statuses not reported yet, as the engine sees them.
	for _, name := range run.RequiredStatuses {
		if !seen[name] {
			v.Checks = append(v.Checks, checkView{Name: name, Kind: "required", State: strings.ToLower(string(run.Checks[name])), Href: v.HeadHref})
		}
	}
	if run.Evidence != nil {
		v.Evidence = run.Evidence.Failed
	}
	return v
}
