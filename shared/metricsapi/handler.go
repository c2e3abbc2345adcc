package metricsapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/queuemetrics"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// Store is what the metrics read; *store.Store implements it.
type Store interface {
	ListRepos(ctx context.Context, org string) ([]store.Repo, error)
	OrgQueuesOfRepo(ctx context.Context, org string, ref repository.Ref) ([]store.QueueRecord, error)
	QueueTransitions(ctx context.Context, r store.QueueRecord, since time.Time) ([]mergequeue.TransitionRecord, error)
}

var _ Store = (*store.Store)(nil)

// DefaultParallel bounds the store reads one request has in flight when
// Handler.Parallel is zero: an organization with a hundred queues is read
// in about a dozen round trips, without a burst of a hundred.
const DefaultParallel = 8

// Handler serves GET /getMergeQueueMetrics.
type Handler struct {
	Store Store
	Now   func() time.Time
	// Parallel bounds the reads in flight (DefaultParallel when zero).
	Parallel int
}

// Endpoints is the metrics endpoint, by function name.
func (h *Handler) Endpoints() api.Handlers {
	return api.Handlers{"get-merge-queue-metrics": h}
}

// ServeHTTP answers the metrics of the caller's organization: query repo
// (owner/name) with repoHost names one repository. 400 for repo without
// repoHost or not owner/name; 404 for a repository with no queue of the
// organization.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ref, err := parseRepo(r)
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	qs, err := h.Queues(r.Context(), api.Org(r.Context()), ref)
	if err != nil {
		api.WriteError(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := queuemetrics.Write(&buf, qs); err != nil {
		api.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", queuemetrics.ContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// parseRepo reads the query: nil when no repository is named.
func parseRepo(r *http.Request) (*repository.Ref, error) {
	q := r.URL.Query()
	repo, host := strings.TrimSpace(q.Get("repo")), strings.TrimSpace(q.Get("repoHost"))
	if repo == "" {
		return nil, nil
	}
	if host == "" {
		return nil, errs.E(errs.Invalid, "repoHost is required with repo")
	}
	for _, f := range [][2]string{{"repo", repo}, {"repoHost", host}} {
		if err := api.LimitOf(f[0]).Check(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	i := strings.LastIndex(repo, "/")
	if i <= 0 || i == len(repo)-1 {
		return nil, errs.E(errs.Invalid, "repo must be OWNER/NAME, got %s", api.Quote(repo))
	}
	return &repository.Ref{Host: host, Owner: repo[:i], Name: repo[i+1:]}, nil
}

// Queues reads the metrics inputs of org's queues, or of repository ref's
// when ref is not nil (errs.NotFound when it has none), as of h.Now.
func (h *Handler) Queues(ctx context.Context, org string, ref *repository.Ref) ([]queuemetrics.Queue, error) {
	var refs []repository.Ref
	if ref != nil {
		refs = []repository.Ref{*ref}
	} else {
		repos, err := h.Store.ListRepos(ctx, org)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, r := range repos {
			if k := r.Ref.Key(); !seen[k] {
				seen[k] = true
				refs = append(refs, r.Ref)
			}
		}
	}
	byRepo := make([][]store.QueueRecord, len(refs))
	err := h.each(ctx, len(refs), func(ctx context.Context, i int) error {
		var err error
		byRepo[i], err = h.Store.OrgQueuesOfRepo(ctx, org, refs[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	var recs []store.QueueRecord
	for _, rs := range byRepo {
		recs = append(recs, rs...)
	}
	if ref != nil && len(recs) == 0 {
		return nil, errs.E(errs.NotFound, "no merge queue for repository %s", ref)
	}
	now := h.Now()
	perQueue := make([][]queuemetrics.Queue, len(recs))
	err = h.each(ctx, len(recs), func(ctx context.Context, i int) error {
		ts, err := h.Store.QueueTransitions(ctx, recs[i], now.Add(-queuemetrics.Window1h))
		if err != nil {
			return err
		}
		perQueue[i] = queuesOf(recs[i], now, ts)
		return nil
	})
	var out []queuemetrics.Queue
	for _, qs := range perQueue {
		out = append(out, qs...)
	}
	return out, err
}

// each runs fn for 0..n-1 with at most h.Parallel at once; the first
// error cancels the rest and is returned.
func (h *Handler) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	p := h.Parallel
	if p <= 0 {
		p = DefaultParallel
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, p)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				return
			}
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// queuesOf is the metrics input of one queue: state counts from its
// snapshot's entries and the hour's window of transition records ts. A
// queue that batches also has a bisection series (ours, as contract 3.9
// leaves it open): its PRs TESTING in batches being bisected, and the PRs
// whose conclusion a bisection run decided in the hour.
func queuesOf(r store.QueueRecord, now time.Time, ts []mergequeue.TransitionRecord) []queuemetrics.Queue {
	repo := r.Key.Repo.Owner + "/" + r.Key.Repo.Name
	s := r.Snapshot
	states := map[mergequeue.PRState]int{}
	bisecting := map[mergequeue.PRState]int{}
	for i := range s.Entries {
		e := &s.Entries[i]
		if !e.Active() {
			continue
		}
		states[e.State]++
		if run := runOf(s, e.RunID); e.State == mergequeue.Testing && run != nil && run.Bisect != nil {
			bisecting[mergequeue.Testing]++
		}
	}
	out := []queuemetrics.Queue{{Repo: repo, Branch: r.Key.Branch, Type: queuemetrics.QueueMain, States: states, Window: queuemetrics.WindowOf(now, ts)}}
	if a := s.Autopilot; s.Queue.Autopilot && a != nil {
		l, est := s.Limits(), a.Estimates()
		out[0].Autopilot = &queuemetrics.Autopilot{Concurrency: l.Concurrency, Batch: l.Batch, BadRate: est.BadRate, FlakeRate: est.FlakeRate, RunTime: est.RunTime}
	}
	if s.Limits().Batch > 1 {
		var bis []mergequeue.TransitionRecord
		for _, t := range ts {
			if t.Transition.Bisection {
				bis = append(bis, t)
			}
		}
		out = append(out, queuemetrics.Queue{Repo: repo, Branch: r.Key.Branch, Type: queuemetrics.QueueBisection, States: bisecting, Window: queuemetrics.WindowOf(now, bis)})
	}
	return out
}

func runOf(s mergequeue.Snapshot, id string) *mergequeue.Run {
	for i := range s.Runs {
		if s.Runs[i].ID == id {
			return &s.Runs[i]
		}
	}
	return nil
}
