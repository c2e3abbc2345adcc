package queueapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuesvc"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// Handlers serves the merge-queue endpoints and GitHub's webhook.
type Handlers struct {
	Store  *store.Store
	Driver *queuesvc.Service
	Now    func() time.Time
	// NewID makes queue and entry ids (uuids).
	NewID func() string
	// LowerEnums spells enum values in lowercase (ENUM_CASE=lower).
	LowerEnums bool
	// EnterpriseHost is the GitHub Enterprise host (from GITHUB_API_URL),
	// accepted besides github.com; "" for none.
	EnterpriseHost string
	// Secrets hold the secret config.SecretGitHubWebhook that verifies
	// GitHub's deliveries; with none configured, every delivery is refused.
	Secrets config.SecretReader

	cases orgCases
}

// enums is how answers to the caller's organization spell enum values:
// its own choice (mainguard org set --enum-case), else the deployment's.
func (h *Handlers) enums(ctx context.Context) enums {
	return enums{lower: h.cases.lower(ctx, h.Store, api.Org(ctx), h.LowerEnums, h.Now())}
}

// Endpoints are the merge-queue endpoints and GitHub's webhook, by
// function name (their routes are api.Routes).
func (h *Handlers) Endpoints() api.Handlers {
	return api.Handlers{
		"create-queue":                    h.CreateQueue(),
		"get-queue":                       h.GetQueue(),
		"update-queue":                    h.UpdateQueue(),
		"delete-queue":                    h.DeleteQueue(),
		"submit-pull-request":             h.SubmitPullRequest(),
		"cancel-pull-request":             h.CancelPullRequest(),
		"restart-tests-on-pull-request":   h.RestartTests(),
		"get-submitted-pull-request":      h.GetSubmittedPullRequest(),
		"set-impacted-targets":            h.SetImpactedTargets(),
		"get-merge-queue-testing-details": h.GetTestingDetails(),
		"list-pull-requests":              h.ListPullRequests(),
		"get-queue-history":               h.GetQueueHistory(),
		"github-webhook":                  h.GitHubWebhook(),
	}
}

// common are the fields of every merge-queue request (contract 3.1).
type common struct {
	Repo         *repository.Ref `json:"repo"`
	TargetBranch *string         `json:"targetBranch"`
}

// key checks the common fields and names the queue of the caller's
// organization, on a repository it owns: any other is not found
// (tenancy.Check), whatever the endpoint.
func (h *Handlers) key(ctx context.Context, c common) (store.QueueKey, error) {
	repo, err := api.RequireRepo(c.Repo, "repo")
	if err != nil {
		return store.QueueKey{}, err
	}
	host := strings.ToLower(strings.TrimSpace(repo.Host))
	if host != "github.com" && (h.EnterpriseHost == "" || host != strings.ToLower(h.EnterpriseHost)) {
		return store.QueueKey{}, errs.E(errs.Invalid, "repo.host %s is not supported for merge queues: only github.com and the configured GitHub Enterprise host are", api.Quote(repo.Host))
	}
	if c.TargetBranch == nil || strings.TrimSpace(*c.TargetBranch) == "" {
		return store.QueueKey{}, errs.E(errs.Invalid, "targetBranch is required")
	}
	if err := h.Driver.Tenancy.Check(ctx, api.Org(ctx), repo); err != nil {
		return store.QueueKey{}, err
	}
	return store.QueueKey{Org: api.Org(ctx), Repo: repo, Branch: *c.TargetBranch}, nil
}

// prRef is the pr object of the pull-request endpoints.
type prRef struct {
	Number json.RawMessage `json:"number"`
	Branch *string         `json:"branch"`
	SHA    *string         `json:"sha"`
}

const numberRule = "pr.number must be a positive integer"

// parseNumber reads pr.number: a JSON integer, or a string of digits (a
// real uploader sends "123").
func parseNumber(pr *prRef) (int, error) {
	if pr == nil {
		return 0, errs.E(errs.Invalid, "pr is required")
	}
	raw := bytes.TrimSpace(pr.Number)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errs.E(errs.Invalid, "pr.number is required")
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, errs.E(errs.Invalid, numberRule)
		}
	} else {
		s = string(raw)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, errs.E(errs.Invalid, numberRule)
	}
	return n, nil
}

type empty struct{}

type createRequest struct {
	common
	Mode        *string `json:"mode"`
	Concurrency *int    `json:"concurrency"`
	mergequeue.AutopilotPatch
}

// CreateQueue serves POST /createQueue: 409 when the branch has a queue.
func (h *Handlers) CreateQueue() http.Handler {
	return api.JSON(func(r *http.Request, req *createRequest) (any, error) {
		k, err := h.key(r.Context(), req.common)
		if err != nil {
			return nil, err
		}
		now := h.Now()
		s, err := mergequeue.CreateQueue(k.Repo, k.Branch,
			mergequeue.QueuePatch{Mode: req.Mode, Concurrency: req.Concurrency, AutopilotPatch: req.AutopilotPatch}, now)
		if err != nil {
			return nil, err
		}
		if _, err := h.Store.UpdateRepo(r.Context(), k.Org, k.Repo, store.RepoSettings{}); err != nil {
			return nil, err
		}
		if err := h.Store.CreateQueue(r.Context(), store.QueueRecord{Key: k, ID: h.NewID(), CreatedAt: now, Snapshot: s}); err != nil {
			return nil, err
		}
		return empty{}, nil
	})
}

// GetQueue serves POST /getQueue: the queue with its enqueued PRs.
func (h *Handlers) GetQueue() http.Handler {
	return api.JSON(func(r *http.Request, req *common) (any, error) {
		k, err := h.key(r.Context(), *req)
		if err != nil {
			return nil, err
		}
		rec, err := h.Driver.View(r.Context(), k)
		if err != nil {
			return nil, err
		}
		v := h.enums(r.Context()).queue(rec.Snapshot)
		prs := []EnqueuedPRView{}
		for _, e := range mergequeue.QueueOrder(rec.Snapshot) {
			prs = append(prs, h.enums(r.Context()).enqueued(e))
		}
		v.EnqueuedPullRequests = &prs
		return v, nil
	})
}

// updateRequest is an updateQueue body: the queue and the settings to
// change, decoded straight into the engine's patch.
type updateRequest struct {
	common
	mergequeue.QueuePatch
}

// PatchOf reads a queue record as getQueue answers it (settings, JSON)
// into the updateQueue call that would set every one of them, as
// updateQueue reads its body: a replay runs under a recorded queue's own
// settings (getQueueHistory's settings). Its state is left out: a
// replay's queue runs.
func PatchOf(settings []byte) (mergequeue.QueuePatch, error) {
	var p mergequeue.QueuePatch
	if err := json.Unmarshal(settings, &p); err != nil {
		return mergequeue.QueuePatch{}, errs.Wrap(errs.Invalid, err, "the queue settings do not read as getQueue's record: %v", err)
	}
	p.State = nil
	return p, nil
}

// UpdateQueue serves POST /updateQueue: the queue without its PRs.
func (h *Handlers) UpdateQueue() http.Handler {
	return api.JSON(func(r *http.Request, req *updateRequest) (any, error) {
		k, err := h.key(r.Context(), req.common)
		if err != nil {
			return nil, err
		}
		rec, err := h.Driver.Apply(r.Context(), k, func(rec store.QueueRecord) (mergequeue.Snapshot, mergequeue.Output, error) {
			return mergequeue.UpdateQueue(rec.Snapshot, req.QueuePatch, h.Now())
		})
		if err != nil {
			return nil, err
		}
		if rec, err = h.Driver.View(r.Context(), k); err != nil { // a mode switch may have ended at once
			return nil, err
		}
		return h.enums(r.Context()).queue(rec.Snapshot), nil
	})
}

// DeleteQueue serves POST /deleteQueue: 400 while any PR is submitted.
func (h *Handlers) DeleteQueue() http.Handler {
	return api.JSON(func(r *http.Request, req *common) (any, error) {
		k, err := h.key(r.Context(), *req)
		if err != nil {
			return nil, err
		}
		if err := h.Driver.Delete(r.Context(), k); err != nil {
			return nil, err
		}
		return empty{}, nil
	})
}

type prRequest struct {
	common
	PR       *prRef `json:"pr"`
	Priority any    `json:"priority"`
	NoBatch  *bool  `json:"noBatch"`
}

// SubmitPullRequest serves POST /submitPullRequest.
func (h *Handlers) SubmitPullRequest() http.Handler {
	return api.JSON(func(r *http.Request, req *prRequest) (any, error) {
		k, err := h.key(r.Context(), req.common)
		if err != nil {
			return nil, err
		}
		n, err := parseNumber(req.PR)
		if err != nil {
			return nil, err
		}
		prio, given, err := mergequeue.ParsePriority(req.Priority)
		if err != nil {
			return nil, err
		}
		c := store.QueueCommand{Kind: store.CommandSubmit, PR: n, NoBatch: req.NoBatch}
		if given {
			c.Priority = &prio
		}
		if err := h.Driver.Record(r.Context(), k, c); err != nil {
			return nil, err
		}
		return empty{}, nil
	})
}

// CancelPullRequest serves POST /cancelPullRequest.
func (h *Handlers) CancelPullRequest() http.Handler { return h.prCommand(store.CommandCancel) }

// RestartTests serves POST /restartTestsOnPullRequest.
func (h *Handlers) RestartTests() http.Handler { return h.prCommand(store.CommandRestart) }

// prCommand serves an endpoint that records one command on one PR of a
// queue (driver.Record: checked, recorded, folded by the driver) and
// answers {}.
func (h *Handlers) prCommand(kind string) http.Handler {
	return api.JSON(func(r *http.Request, req *prRequest) (any, error) {
		k, err := h.key(r.Context(), req.common)
		if err != nil {
			return nil, err
		}
		n, err := parseNumber(req.PR)
		if err != nil {
			return nil, err
		}
		if err := h.Driver.Record(r.Context(), k, store.QueueCommand{Kind: kind, PR: n}); err != nil {
			return nil, err
		}
		return empty{}, nil
	})
}

// GetSubmittedPullRequest serves POST /getSubmittedPullRequest, by
// pr.number or by pr.branch (the head branch: its open submitted PR, else
// the one that finished last).
func (h *Handlers) GetSubmittedPullRequest() http.Handler {
	return api.JSON(func(r *http.Request, req *prRequest) (any, error) {
		ctx := r.Context()
		k, err := h.key(ctx, req.common)
		if err != nil {
			return nil, err
		}
		if req.PR == nil {
			return nil, errs.E(errs.Invalid, "pr is required")
		}
		byBranch := len(bytes.TrimSpace(req.PR.Number)) == 0 && req.PR.Branch != nil
		var n int
		if byBranch {
			if strings.TrimSpace(*req.PR.Branch) == "" {
				return nil, errs.E(errs.Invalid, "pr.branch must not be empty")
			}
		} else if n, err = parseNumber(req.PR); err != nil {
			return nil, err
		}
		var rec store.QueueRecord
		if byBranch {
			rec, err = h.Driver.View(ctx, k)
		} else {
			rec, err = h.Driver.ViewPR(ctx, k, n) // its own pending commands are all it shows
		}
		if err != nil {
			return nil, err
		}
		var e mergequeue.Entry
		if byBranch {
			if e, err = h.byBranch(ctx, rec, *req.PR.Branch); err != nil {
				return nil, err
			}
		} else if e, err = h.entry(ctx, rec, n); err != nil {
			return nil, err
		}
		has := false
		if e.PR.HeadSHA != "" {
			if has, err = h.Store.HasImpactedTargets(ctx, rec, e.PRNumber, e.PR.HeadSHA); err != nil {
				return nil, err
			}
		}
		return h.enums(r.Context()).submitted(e, rec.Snapshot.Queue, has), nil
	})
}

// entry is PR n of the queue, as fresh as the store has it.
func (h *Handlers) entry(ctx context.Context, rec store.QueueRecord, n int) (mergequeue.Entry, error) {
	stored, err := h.Store.QueueEntry(ctx, rec, n)
	return stored.Entry, err
}

func (h *Handlers) byBranch(ctx context.Context, rec store.QueueRecord, branch string) (mergequeue.Entry, error) {
	stored, err := h.Store.QueueEntriesByHead(ctx, rec, branch)
	if err != nil {
		return mergequeue.Entry{}, err
	}
	var cands []mergequeue.Entry
	for _, s := range stored {
		cands = append(cands, s.Entry)
	}
	if len(cands) == 0 {
		return mergequeue.Entry{}, errs.E(errs.NotFound, "no pull request of branch %s was ever submitted to this queue", api.Clip(branch))
	}
	slices.SortFunc(cands, func(a, b mergequeue.Entry) int {
		if a.Active() != b.Active() {
			if a.Active() {
				return -1
			}
			return 1
		}
		return b.StateChangedAt.Compare(a.StateChangedAt)
	})
	return cands[0], nil
}

type targetsRequest struct {
	common
	PR              *prRef          `json:"pr"`
	ImpactedTargets json.RawMessage `json:"impactedTargets"`
}

const targetsRule = `impactedTargets must be "ALL" or an array of strings`

// parseTargets reads impactedTargets: "ALL" (any case) or a list within
// the field's limit (api.Limits).
func parseTargets(raw json.RawMessage) (store.ImpactedTargets, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return store.ImpactedTargets{}, errs.E(errs.Invalid, "impactedTargets is required")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || !strings.EqualFold(s, "ALL") {
			return store.ImpactedTargets{}, errs.E(errs.Invalid, targetsRule)
		}
		return store.ImpactedTargets{All: true}, nil
	case '[':
		var list []*string
		if err := json.Unmarshal(raw, &list); err != nil {
			return store.ImpactedTargets{}, errs.E(errs.Invalid, targetsRule)
		}
		lim := api.LimitOf("impactedTargets")
		if err := lim.CheckItems("impactedTargets", len(list)); err != nil {
			return store.ImpactedTargets{}, err
		}
		out := make([]string, len(list))
		for i, s := range list {
			if s == nil {
				return store.ImpactedTargets{}, errs.E(errs.Invalid, "impactedTargets[%d] must be a string", i)
			}
			if err := lim.Check(fmt.Sprintf("impactedTargets[%d]", i), *s); err != nil {
				return store.ImpactedTargets{}, err
			}
			out[i] = *s
		}
		return store.ImpactedTargets{Targets: out}, nil
	}
	return store.ImpactedTargets{}, errs.E(errs.Invalid, targetsRule)
}

// SetImpactedTargets serves POST /setImpactedTargets: the targets belong
// to the PR's head sha.
func (h *Handlers) SetImpactedTargets() http.Handler {
	return api.JSON(func(r *http.Request, req *targetsRequest) (any, error) {
		k, err := h.key(r.Context(), req.common)
		if err != nil {
			return nil, err
		}
		n, err := parseNumber(req.PR)
		if err != nil {
			return nil, err
		}
		if req.PR.SHA == nil || strings.TrimSpace(*req.PR.SHA) == "" {
			return nil, errs.E(errs.Invalid, "pr.sha is required")
		}
		t, err := parseTargets(req.ImpactedTargets)
		if err != nil {
			return nil, err
		}
		rec, err := h.Store.GetQueue(r.Context(), k)
		if err != nil {
			return nil, err
		}
		if err := h.Store.PutImpactedTargets(r.Context(), rec, n, strings.TrimSpace(*req.PR.SHA), t); err != nil {
			return nil, err
		}
		return empty{}, nil
	})
}

type detailsRequest struct {
	TestRunID *string `json:"testRunId"`
}

// GetTestingDetails serves POST /getMergeQueueTestingDetails.
func (h *Handlers) GetTestingDetails() http.Handler {
	return api.JSON(func(r *http.Request, req *detailsRequest) (any, error) {
		ctx := r.Context()
		if req.TestRunID == nil || strings.TrimSpace(*req.TestRunID) == "" {
			return nil, errs.E(errs.Invalid, "testRunId is required")
		}
		run, err := h.Store.QueueRun(ctx, api.Org(ctx), strings.TrimSpace(*req.TestRunID))
		if err != nil {
			return nil, err
		}
		if ok, err := h.Driver.Tenancy.Owns(ctx, api.Org(ctx), run.Key.Repo); err != nil || !ok {
			// A run of a queue on a repository the organization does not
			// own (made before ownership) is as unknown as any other.
			return nil, cmp.Or[error](err, errs.E(errs.NotFound, "no test run %s", strings.TrimSpace(*req.TestRunID)))
		}
		v := h.enums(r.Context()).details(run)
		rec, err := h.Store.GetQueue(ctx, run.Key)
		if err != nil {
			if errs.Is(err, errs.NotFound) {
				return v, nil // the queue is gone; its run stays readable
			}
			return nil, err
		}
		var union []string
		all := false
		for _, p := range run.Run.PRs {
			if !p.UnderTest {
				continue
			}
			t, found, err := h.Store.GetImpactedTargets(ctx, rec, p.PRNumber, p.HeadSHA)
			if err != nil {
				return nil, err
			}
			pv := PRTargetsView{PRNumber: p.PRNumber}
			switch {
			case !found:
			case t.All:
				pv.ImpactedTargets, all = "ALL", true
			default:
				pv.ImpactedTargets = t.Targets
				union = append(union, t.Targets...)
			}
			v.ImpactedTargetsForTestedPrs = append(v.ImpactedTargetsForTestedPrs, pv)
		}
		if all {
			v.ImpactedTargets = "ALL"
		} else {
			slices.Sort(union)
			union = slices.Compact(union)
			if union == nil {
				union = []string{}
			}
			v.ImpactedTargets = union
		}
		return v, nil
	})
}

type listRequest struct {
	common
	State  *string `json:"state"`
	Since  *string `json:"since"`
	Cursor *string `json:"cursor"`
	Take   *int    `json:"take"`
}

// ListPullRequestsResponse is the answer of listPullRequests.
type ListPullRequestsResponse struct {
	PullRequests []SubmittedPRView `json:"pullRequests"`
	NextCursor   string            `json:"nextCursor,omitempty"`
}

var prStates = []mergequeue.PRState{
	mergequeue.NotReady, mergequeue.Pending, mergequeue.Testing, mergequeue.TestsPassed,
	mergequeue.Merged, mergequeue.Failed, mergequeue.Cancelled, mergequeue.PendingFailure,
}

// ListPullRequests serves POST /listPullRequests: the queue's PRs in
// number order, a page at a time.
func (h *Handlers) ListPullRequests() http.Handler {
	return api.JSON(func(r *http.Request, req *listRequest) (any, error) {
		ctx := r.Context()
		k, err := h.key(ctx, req.common)
		if err != nil {
			return nil, err
		}
		take := 50
		if req.Take != nil {
			if *req.Take < 1 || *req.Take > 100 {
				return nil, errs.E(errs.Invalid, "take must be from 1 to 100")
			}
			take = *req.Take
		}
		state := ""
		if req.State != nil {
			i := slices.IndexFunc(prStates, func(s mergequeue.PRState) bool { return strings.EqualFold(string(s), *req.State) })
			if i < 0 {
				return nil, errs.E(errs.Invalid, "state must be one of NOT_READY, PENDING, TESTING, TESTS_PASSED, MERGED, FAILED, CANCELLED, PENDING_FAILURE")
			}
			state = string(prStates[i])
		}
		var since time.Time
		if req.Since != nil {
			if since, err = time.Parse(time.RFC3339Nano, *req.Since); err != nil {
				return nil, errs.E(errs.Invalid, "since must be an RFC 3339 timestamp like 2026-07-23T01:32:50.000Z")
			}
		}
		cursor := ""
		if req.Cursor != nil {
			cursor = *req.Cursor
		}
		rec, err := h.Driver.View(ctx, k)
		if err != nil {
			return nil, err
		}
		page, err := h.Store.ListQueueEntries(ctx, rec, cursor, int32(take), state, since)
		if err != nil {
			return nil, err
		}
		out := ListPullRequestsResponse{PullRequests: []SubmittedPRView{}, NextCursor: page.Next}
		for _, s := range page.Entries {
			out.PullRequests = append(out.PullRequests, h.enums(r.Context()).submitted(s.Entry, rec.Snapshot.Queue, false))
		}
		return out, nil
	})
}

type historyRequest struct {
	common
	Since *string `json:"since"`
	Until *string `json:"until"`
}

// QueueHistoryView is the answer of getQueueHistory (ours): the queue's
// settings as getQueue shows them (without its pull requests) and its
// history in the window, for `mainguard sim --from-history`.
type QueueHistoryView struct {
	Repo         repository.Ref `json:"repo"`
	TargetBranch string         `json:"targetBranch"`
	Settings     QueueView      `json:"settings"`
	mergequeue.History
}

// MaxHistoryWindow bounds the window of one getQueueHistory call: a
// month of a busy queue is a few MB, within Lambda's 6 MB answer.
const MaxHistoryWindow = 31 * 24 * time.Hour

// defaultHistoryWindow is the window when since is not given.
const defaultHistoryWindow = 30 * 24 * time.Hour

// GetQueueHistory serves POST /getQueueHistory (ours): the queue's
// arrivals, runs and conclusions from since (default 30 days before
// until) to until (default now, included), at most MaxHistoryWindow apart.
func (h *Handlers) GetQueueHistory() http.Handler {
	return api.JSON(func(r *http.Request, req *historyRequest) (any, error) {
		ctx := r.Context()
		k, err := h.key(ctx, req.common)
		if err != nil {
			return nil, err
		}
		// Without until, the window ends just after now (the next
		// millisecond: the API's precision), so that what happened at
		// this very instant, a merge of the last tick, is in it.
		until := h.Now().Truncate(time.Millisecond).Add(time.Millisecond)
		if req.Until != nil {
			if until, err = time.Parse(time.RFC3339Nano, *req.Until); err != nil {
				return nil, errs.E(errs.Invalid, "until must be an RFC 3339 timestamp like 2026-07-23T01:32:50.000Z")
			}
		}
		since := until.Add(-defaultHistoryWindow)
		if req.Since != nil {
			if since, err = time.Parse(time.RFC3339Nano, *req.Since); err != nil {
				return nil, errs.E(errs.Invalid, "since must be an RFC 3339 timestamp like 2026-07-23T01:32:50.000Z")
			}
		}
		switch {
		case !since.Before(until):
			return nil, errs.E(errs.Invalid, "since must be before until")
		case until.Sub(since) > MaxHistoryWindow:
			return nil, errs.E(errs.Invalid, "since and until must be at most 31 days apart: ask for a longer history a month at a time")
		}
		rec, err := h.Driver.View(ctx, k)
		if err != nil {
			return nil, err
		}
		hist, err := h.Store.QueueHistory(ctx, rec, since, until)
		if err != nil {
			return nil, err
		}
		e := h.enums(ctx)
		for i := range hist.Runs {
			hist.Runs[i].Outcome = mergequeue.RunStatus(e.of(string(hist.Runs[i].Outcome)))
		}
		return QueueHistoryView{Repo: rec.Key.Repo, TargetBranch: rec.Key.Branch, Settings: e.queue(rec.Snapshot), History: hist}, nil
	})
}
