package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/queueapi"
)

// queueStatus is `mainguard queue status [PR]`: the queue's state and its
// pull requests in queue order (getQueue), or, given a number, that pull
// request's state, priority and position (getSubmittedPullRequest, with
// getQueue for the position). --json prints getQueue's answer, or
// getSubmittedPullRequest's.
func queueStatus(e *env, args []string) error {
	q, pos, err := newQueueFlags(newFlags(cmdOf("queue status")), e).parse(e, args, -1)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError(fmt.Sprintf("queue status takes at most one pull request number, got %d arguments", len(pos)))
	}
	var pr queueapi.SubmittedPRView
	if len(pos) == 1 {
		n, err := prArg("queue status", pos[0])
		if err != nil {
			return err
		}
		if printed, err := q.answer("/getSubmittedPullRequest", map[string]any{"pr": prNumber(n)}, &pr); err != nil || printed {
			return err
		}
	}
	var v queueapi.QueueView
	if printed, err := q.answer("/getQueue", nil, &v); err != nil || printed {
		return err
	}
	p := colorOn(e)
	if len(pos) == 1 {
		q.printPR(p, pr, v)
		return nil
	}
	prs := *v.EnqueuedPullRequests
	if a := v.AutopilotStatus; a != nil {
		q.line("%s: %s, %s, autopilot: concurrency %d, %s", q, p.paint(stateCell(v.State)), v.Mode, a.Concurrency, batchWords(a.BatchSize))
		q.printAutopilot(*a)
	} else {
		q.line("%s: %s, %s, concurrency %d", q, p.paint(stateCell(v.State)), v.Mode, v.Concurrency)
	}
	if len(prs) == 0 {
		q.line("no pull requests in the queue")
		return nil
	}
	q.line("%d pull request(s) in the queue, in order (those not ready yet are left out: `mainguard queue list` shows them)\n", len(prs))
	rows := make([][]cell, len(prs))
	for i, pr := range prs {
		rows[i] = []cell{{text: strconv.Itoa(i + 1)}, {text: "#" + strconv.Itoa(pr.PRNumber)}, stateCell(pr.State),
			{text: pr.PriorityName}, {text: ago(e.now(), pr.StateChangedAt)}, {text: pr.PRAuthor}, {text: pr.PRTitle}}
	}
	p.printTable(e.stdout, []string{"POS", "PR", "STATE", "PRIORITY", "SINCE", "AUTHOR", "TITLE"}, rows)
	return nil
}

// printPR writes one pull request's record with its place in the queue.
func (q *queue) printPR(p painter, pr queueapi.SubmittedPRView, v queueapi.QueueView) {
	q.line("#%d %s (%s)", pr.PRNumber, pr.PRTitle, pr.PRAuthor)
	q.line("  state     %s since %s", p.paint(stateCell(pr.State)), ago(q.e.now(), pr.StateChangedAt))
	i := slices.IndexFunc(*v.EnqueuedPullRequests, func(en queueapi.EnqueuedPRView) bool { return en.PRNumber == pr.PRNumber })
	var where string
	switch {
	case i >= 0:
		where = fmt.Sprintf("%d of %d", i+1, len(*v.EnqueuedPullRequests))
	case pr.IsCurrentlySubmittedToQueue:
		r := pr.Readiness
		where = fmt.Sprintf("none yet: not ready (GitHub mergeability %s, base branch matches: %s", r.GitHubMergeability, yesNo(r.DoesBaseBranchMatch))
		if r.RequiresImpactedTargets {
			where += ", impacted targets: " + yesNo(r.HasImpactedTargets)
		}
		where += ")"
	default:
		where = "none: it left the queue"
	}
	q.line("  position  %s", where)
	q.line("  queue     %s: %s", q, p.paint(stateCell(v.State)))
	q.line("  priority  %s (%d)", pr.PriorityName, pr.PriorityValue)
	var more []string
	if pr.NoBatch {
		more = append(more, "tested alone (no batch)")
	}
	if pr.FlakyRetriesUsed > 0 {
		more = append(more, fmt.Sprintf("%d anti-flake retry(ies) taken", pr.FlakyRetriesUsed))
	}
	if len(more) > 0 {
		q.line("  notes     %s", strings.Join(more, "; "))
	}
	q.line("  head      %s", pr.PRSha)
	if pr.VerifiedByTestRun != nil {
		q.line("  merged by test run %s", *pr.VerifiedByTestRun)
	}
}

// listPage is how many pull requests queue list asks for at a time: the
// API's most (tests ask for fewer, to read several pages).
var listPage = 100

// queueList is `mainguard queue list`: every pull request submitted to the
// queue, by number, read page after page from listPullRequests; --json
// prints them as one answer of listPullRequests.
func queueList(e *env, args []string) error {
	f := newFlags(cmdOf("queue list"))
	qf := newQueueFlags(f, e)
	state := f.String("state", "", "only the pull requests in this state, e.g. TESTING or FAILED")
	q, _, err := qf.parse(e, args, 0)
	if err != nil {
		return err
	}
	all := queueapi.ListPullRequestsResponse{PullRequests: []queueapi.SubmittedPRView{}}
	req := map[string]any{"take": listPage}
	if *state != "" {
		req["state"] = *state
	}
	for {
		var page queueapi.ListPullRequestsResponse
		if err := q.get("/listPullRequests", req, &page); err != nil {
			return err
		}
		all.PullRequests = append(all.PullRequests, page.PullRequests...)
		if page.NextCursor == "" {
			break
		}
		req["cursor"] = page.NextCursor
	}
	if q.json {
		return q.printAs(all)
	}
	if len(all.PullRequests) == 0 {
		q.line("no pull requests in %s", q)
		return nil
	}
	rows := make([][]cell, len(all.PullRequests))
	for i, pr := range all.PullRequests {
		rows[i] = []cell{{text: "#" + strconv.Itoa(pr.PRNumber)}, stateCell(pr.State), {text: pr.PriorityName},
			{text: ago(e.now(), pr.StateChangedAt)}, {text: pr.PRAuthor}, {text: pr.PRTitle}}
	}
	colorOn(e).printTable(e.stdout, []string{"PR", "STATE", "PRIORITY", "SINCE", "AUTHOR", "TITLE"}, rows)
	return nil
}

// printAutopilot writes what the autopilot estimates and its last change,
// as the queue's page shows them.
func (q *queue) printAutopilot(a queueapi.AutopilotStatusView) {
	run := time.Duration(a.RunDurationSeconds * float64(time.Second)).Round(time.Second)
	q.line("  estimates: bad-PR rate %.1f%% over the last %d pull requests, flake rate %.1f%% over the last %d runs, run time %v",
		100*a.BadPRRate, a.PullRequestsObserved, 100*a.FlakeRate, a.RunsObserved, run)
	if len(a.Changes) > 0 {
		c := a.Changes[0]
		q.line("  last change %s: %s", ago(q.e.now(), c.At), c.Reason)
	}
}

// batchWords says a batch size.
func batchWords(b int) string {
	if b <= 1 {
		return "no batching"
	}
	return fmt.Sprintf("batches of %d", b)
}
