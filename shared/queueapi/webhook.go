package queueapi

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/mainguard/mainguard/shared/api"
	"github.com/mainguard/mainguard/shared/config"
	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
)

// statusContextPrefix starts the commit status the queue sets itself: its
// own status events need no step.
const statusContextPrefix = "Trunk Merge Queue ("

// GitHubWebhook serves POST /github/webhook: the signature is checked
// first (401, nothing read further), the delivery id is claimed once
// (GitHub redelivers; a duplicate is acknowledged and ignored), commands
// given by comment or label are recorded (ghcommands.go), and the queues
// the event concerns are advanced. Advancing errors are logged, not
// answered: GitHub would only redeliver, and the scheduler polls anyway.
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
		if err := api.LimitOf("X-GitHub-Delivery").Check("X-GitHub-Delivery", id); err != nil {
			api.WriteError(w, r, err)
			return
		}
		if id != "" {
			fresh, err := h.Store.ClaimGitHubDelivery(ctx, id, h.Now())
			if err != nil {
				api.WriteError(w, r, err)
				return
			}
			if !fresh {
				api.WriteJSON(w, r, http.StatusOK, empty{})
				return
			}
		}
		if err := h.gitHubCommand(ctx, ev); err != nil {
			// GitHub did not answer before the command was recorded: let
			// the delivery be handled again when redelivered.
			if id != "" {
				_ = h.Store.ReleaseGitHubDelivery(ctx, id)
			}
			api.WriteError(w, r, errs.Wrap(errs.Unavailable, err, "GitHub did not answer; redeliver the webhook"))
			return
		}
		if !ev.Ignored {
			qs, err := h.Store.QueuesOfRepo(ctx, ev.Repo.Owner, ev.Repo.Name)
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
