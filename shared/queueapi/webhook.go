package queueapi

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
	"github.com/mainguard/mainguard/shared/store"
)

// statusContextPrefix starts the commit status the queue sets itself: its
// own status events need no step.
const statusContextPrefix = "Trunk Merge Queue ("

// GitHubWebhook serves POST /github/webhook: the signature is checked
// first (401, nothing read further), then the delivery: its id is
// required and claimed once (GitHub redelivers; a duplicate is
// acknowledged and ignored), and one that may give a command (a comment, a
// label) must be recent (ReplayWindow). Commands given by comment or label
// are recorded (ghcommands.go), each comment's once whatever delivery
// carries it, and the queues the event concerns are advanced: the queues
// of the organization that owns the repository, no other's. Advancing
// errors are logged, not answered: GitHub would only redeliver, and the
// scheduler polls anyway.
func (h *Handlers) GitHubWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			api.WriteError(w, r, errs.E(errs.Invalid, "request body could not be read"))
			return
		}
		if err := h.verify(ctx, body, r.Header.Get("X-Hub-Signature-256")); err != nil {
			api.WriteError(w, r, err)
			return
		}
		ev, err := github.ParseEvent(r.Header.Get("X-GitHub-Event"), body)
		if err != nil {
			api.WriteError(w, r, err)
			return
		}
		id := r.Header.Get("X-GitHub-Delivery")
		if err := checkDelivery(id, ev, h.Now()); err != nil {
			api.WriteError(w, r, err)
			return
		}
		fresh, err := h.Store.ClaimGitHubDelivery(ctx, id, h.Now())
		if err != nil {
			api.WriteError(w, r, err)
			return
		}
		if !fresh {
			api.WriteJSON(w, r, http.StatusOK, empty{})
			return
		}
		if err := h.gitHubCommand(ctx, ev); err != nil {
			// GitHub did not answer before the command was recorded: let
			// the delivery be handled again when redelivered.
			_ = h.Store.ReleaseGitHubDelivery(ctx, id)
			api.WriteError(w, r, errs.Wrap(errs.Unavailable, err, "GitHub did not answer; redeliver the webhook"))
			return
		}
		if !ev.Ignored {
			qs, err := h.ownerQueues(ctx, ev.Repo)
			if err != nil {
				api.WriteError(w, r, err)
				return
			}
			for _, q := range qs {
				if !concerns(ev, q) {
					continue
				}
				if err := h.Driver.Advance(ctx, q.Key); err != nil && h.Driver.Log != nil {
					h.Driver.Log.WarnContext(ctx, "github webhook: advance failed; the scheduler retries", "queue", q.Key.String(), "error", err.Error())
				}
			}
		}
		api.WriteJSON(w, r, http.StatusOK, empty{})
	})
}

// verify checks a delivery's signature with the webhook secret; one that
// does not verify is checked once more with the secret read again, in case
// it was rotated (config.SecretReader.RenewSecret reads at most once per
// a while, whatever a sender tries). An unreadable secret is 503: GitHub
// shows the failed delivery, to redeliver once it is readable.
func (h *Handlers) verify(ctx context.Context, body []byte, signature string) error {
	refused := errs.E(errs.Unauthorized, "X-Hub-Signature-256 does not match the body")
	if h.Secrets == nil || !h.Secrets.HasSecret(config.SecretGitHubWebhook) {
		return refused
	}
	secret, err := h.Secrets.Secret(ctx, config.SecretGitHubWebhook)
	if err != nil {
		return err
	}
	if github.VerifySignature(secret, body, signature) {
		return nil
	}
	if fresh, changed, err := h.Secrets.RenewSecret(ctx, config.SecretGitHubWebhook); err == nil && changed && github.VerifySignature(fresh, body, signature) {
		return nil
	}
	return refused
}

// ReplayWindow is how old the news of a delivery that may give a command
// (a comment, a label) may be: GitHub delivers within seconds, and
// redelivers on request; a delivery of an older comment is refused, so a
// recorded delivery cannot be replayed later under a new id to run its
// command again once its marker is gone. Other events only make the queue
// look at GitHub again, which a replay cannot mislead.
const ReplayWindow = time.Hour

// checkDelivery checks what a delivery must carry: its id (which GitHub
// always sends), and for a command, news no older than ReplayWindow.
func checkDelivery(id string, ev github.Event, now time.Time) error {
	if id == "" {
		return errs.E(errs.Invalid, "X-GitHub-Delivery is required")
	}
	if err := api.LimitOf("X-GitHub-Delivery").Check("X-GitHub-Delivery", id); err != nil {
		return err
	}
	if !mayCommand(ev) {
		return nil
	}
	if ev.UpdatedAt.IsZero() {
		return errs.E(errs.Invalid, "a %s delivery must say when it happened (updated_at)", ev.Kind)
	}
	if age := now.Sub(ev.UpdatedAt); age > ReplayWindow {
		return errs.E(errs.Invalid, "this %s delivery is %s old: commands are taken within %s of their comment or label, so a replayed delivery runs nothing", ev.Kind, age.Round(time.Second), ReplayWindow)
	}
	return nil
}

// mayCommand reports whether ev may give the queue a command.
func mayCommand(ev github.Event) bool {
	return ev.Kind == github.EventIssueComment ||
		ev.Kind == github.EventPullRequest && (ev.Action == "labeled" || ev.Action == "unlabeled")
}

// ownerQueues are the queues of repo's owner on it: none when no
// organization owns it. Queues other organizations made on it (before
// ownership, or before it moved) hear nothing from it.
func (h *Handlers) ownerQueues(ctx context.Context, repo github.Repo) ([]store.QueueRecord, error) {
	owner, err := h.Driver.Tenancy.Owner(ctx, repository.Ref{Owner: repo.Owner, Name: repo.Name})
	if err != nil || owner == "" {
		return nil, err
	}
	all, err := h.Store.QueuesOfRepo(ctx, repo.Owner, repo.Name)
	if err != nil {
		return nil, err
	}
	var out []store.QueueRecord
	for _, q := range all {
		if strings.EqualFold(q.Key.Org, owner) {
			out = append(out, q)
		}
	}
	return out, nil
}

// concerns reports whether event ev may move queue q: a pull request
// submitted to it or based on its branch, a push to its branch, or a
// status or check while it has work in flight.
func concerns(ev github.Event, q store.QueueRecord) bool {
	if !q.Active() {
		return false
	}
	branch := q.Key.Branch
	switch ev.Kind {
	case github.EventPullRequest:
		return ev.BaseRef == branch || ev.BaseChangedFrom == branch ||
			slices.ContainsFunc(q.Snapshot.Entries, func(e mergequeue.Entry) bool { return e.PRNumber == ev.PR && e.Active() })
	case github.EventPush:
		return strings.TrimPrefix(ev.Ref, "refs/heads/") == branch
	case github.EventStatus:
		return !strings.HasPrefix(ev.Context, statusContextPrefix)
	case github.EventIssueComment:
		return false // a command is folded as it is recorded
	}
	return true // check_run, check_suite
}
