package queueapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/github"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/tenancy"
)

// Commands from GitHub: a comment on a pull request (commandsEnabled) and
// the enqueueing label (labelCommandsEnabled). They are recorded as the
// API's commands are (driver.Record), so they are checked, ordered and
// folded the same way, on the queues of the repository's owner alone.
// Only someone with write access to the repository commands the queue
// (their permission is trusted for tenancy.PermissionTTL); the comment is
// acknowledged with a 👍 reaction, and every refusal or problem is
// answered with a comment naming it. Only new comments count (an edit or
// a deletion does nothing); a delivery is handled once (its id is claimed
// before), and a comment's command once, whatever delivery carries it
// (store.ClaimGitHubCommand: the comment id and its updated_at).

// ghCommand is one comment command, parsed.
type ghCommand struct {
	verb     string // merge, cancel, retry, status
	priority *int
	noBatch  *bool
	problem  string // what is wrong with it, to answer; "" when valid
}

const commandHelp = "The merge queue understands, on a pull request:\n\n" +
	"- `/mainguard merge [--priority urgent|high|medium|low|0..255] [--no-batch]` (or `/trunk merge`): submit it\n" +
	"- `/mainguard cancel`: take it out of the queue\n" +
	"- `/mainguard retry`: test it again (a failed or cancelled one is submitted again)\n" +
	"- `/mainguard status`: where it is in the queue"

// parseCommand finds the command a comment gives: its first line that
// starts with /mainguard or /trunk. ok is false when there is none (the
// comment is not for the queue).
func parseCommand(body string) (c ghCommand, ok bool) {
	for line := range strings.Lines(body) {
		f := strings.Fields(line)
		if len(f) == 0 || (f[0] != "/mainguard" && f[0] != "/trunk") {
			continue
		}
		if len(f) == 1 {
			return ghCommand{problem: "That command names no action.\n\n" + commandHelp}, true
		}
		c.verb = strings.ToLower(f[1])
		args := f[2:]
		switch c.verb {
		case "merge":
			for i := 0; i < len(args); i++ {
				switch args[i] {
				case "--no-batch":
					yes := true
					c.noBatch = &yes
				case "--priority":
					if i+1 == len(args) {
						return ghCommand{problem: "`--priority` needs a value: urgent, high, medium, low or 0 to 255."}, true
					}
					i++
					p, _, err := mergequeue.ParsePriority(args[i])
					if err != nil {
						return ghCommand{problem: fmt.Sprintf("`--priority %s` is not a priority: %s.", args[i], errs.MessageOf(err))}, true
					}
					c.priority = &p
				default:
					return ghCommand{problem: fmt.Sprintf("`/%s merge` takes `--priority` and `--no-batch`, not `%s`.", f[0][1:], args[i])}, true
				}
			}
		case "cancel", "retry", "status":
			if len(args) > 0 {
				return ghCommand{problem: fmt.Sprintf("`%s` takes no arguments.", c.verb)}, true
			}
		default:
			return ghCommand{problem: fmt.Sprintf("`%s` is not a merge queue command.\n\n%s", f[1], commandHelp)}, true
		}
		return c, true
	}
	return ghCommand{}, false
}

// gitHubCommand handles a delivery that may command the queue: a new
// comment with a command, or the enqueueing label added or removed. An
// error means GitHub did not answer before anything was recorded: the
// delivery may be handled again.
func (h *Handlers) gitHubCommand(ctx context.Context, ev github.Event) error {
	switch {
	case ev.Kind == github.EventIssueComment && ev.Action == "created":
		return h.commentCommand(ctx, ev)
	case ev.Kind == github.EventPullRequest && (ev.Action == "labeled" || ev.Action == "unlabeled"):
		return h.labelCommand(ctx, ev)
	}
	return nil
}

func (h *Handlers) commentCommand(ctx context.Context, ev github.Event) error {
	c, ok := parseCommand(ev.CommentBody)
	if !ok {
		return nil
	}
	mark := commentMark(ev)
	fresh, err := h.Store.ClaimGitHubCommand(ctx, mark, h.Now())
	if err != nil || !fresh {
		return err // answered before, under another delivery id
	}
	if err := h.runComment(ctx, ev, c); err != nil {
		_ = h.Store.ReleaseGitHubCommand(ctx, mark)
		return err
	}
	return nil
}

// commentMark names one comment's command, as it stood at its last edit.
func commentMark(ev github.Event) string {
	return fmt.Sprintf("%s#comment#%d#%s", strings.ToLower(ev.Repo.String()), ev.CommentID, ev.UpdatedAt.UTC().Format(time.RFC3339Nano))
}

func (h *Handlers) runComment(ctx context.Context, ev github.Event, c ghCommand) error {
	if !ev.IsPR {
		return h.reply(ctx, ev, fmt.Sprintf("@%s, the merge queue takes commands on pull requests only; #%d is an issue.", ev.Sender, ev.PR))
	}
	if c.problem != "" {
		return h.reply(ctx, ev, fmt.Sprintf("@%s, %s", ev.Sender, c.problem))
	}
	qs, ok, err := h.commandQueues(ctx, ev, func(q mergequeue.Queue) bool { return q.CommandsEnabled })
	if err != nil || !ok {
		return err
	}
	for _, q := range qs {
		if err := h.runCommand(ctx, ev, q.Key, c); err != nil {
			return err
		}
	}
	return nil
}

// labelCommand submits a PR given the enqueueing label, and cancels it
// when the label is taken off.
func (h *Handlers) labelCommand(ctx context.Context, ev github.Event) error {
	isLabel := func(q mergequeue.Queue) bool {
		return q.LabelCommandsEnabled && strings.EqualFold(q.WithRetryDefaults().EnqueueingLabel, ev.Label)
	}
	all, err := h.ownerQueues(ctx, ev.Repo)
	if err != nil {
		return err
	}
	ours := strings.EqualFold(ev.Label, mergequeue.DefaultEnqueueingLabel)
	for _, q := range all {
		ours = ours || isLabel(q.Snapshot.Queue)
	}
	if !ours || ev.Sender == "" {
		return nil
	}
	qs, ok, err := h.commandQueues(ctx, ev, isLabel)
	if err != nil || !ok {
		return err
	}
	c := ghCommand{verb: "merge"}
	if ev.Action == "unlabeled" {
		c.verb = "cancel"
	}
	for _, q := range qs {
		if err := h.runCommand(ctx, ev, q.Key, c); err != nil {
			return err
		}
	}
	return nil
}

// commandQueues checks that ev's sender may command and finds the queues
// of the PR's base branch that take the command (enabled); ok is false
// when the sender was refused or no queue takes it (both answered; a
// queue that has the command off is silent).
func (h *Handlers) commandQueues(ctx context.Context, ev github.Event, enabled func(mergequeue.Queue) bool) ([]store.QueueRecord, bool, error) {
	repo := github.Repo{Owner: ev.Repo.Owner, Name: ev.Repo.Name}
	perm, err := h.Driver.Tenancy.Permission(ctx, repo, ev.Sender)
	if err != nil {
		return nil, false, err
	}
	if !tenancy.CanWrite(perm) {
		return nil, false, h.reply(ctx, ev, fmt.Sprintf("@%s, only people with write access to %s can command the merge queue.", ev.Sender, repo))
	}
	base := ev.BaseRef
	if base == "" { // a comment names the pull request, not its base
		pr, err := h.Driver.GitHub.PullRequest(ctx, repo, ev.PR)
		if err != nil {
			return nil, false, err
		}
		base = pr.BaseRef
	}
	all, err := h.ownerQueues(ctx, ev.Repo)
	if err != nil {
		return nil, false, err
	}
	var qs []store.QueueRecord
	found := false
	for _, q := range all {
		if q.Key.Branch == base {
			found = true
			if enabled(q.Snapshot.Queue) {
				qs = append(qs, q)
			}
		}
	}
	if !found {
		return nil, false, h.reply(ctx, ev, fmt.Sprintf("@%s, %s has no merge queue for `%s`, the base branch of #%d: nothing was queued.", ev.Sender, repo, base, ev.PR))
	}
	return qs, len(qs) > 0, nil
}

// runCommand records c on PR ev.PR of queue k and acknowledges it; a
// command the queue refuses is answered with its reason.
func (h *Handlers) runCommand(ctx context.Context, ev github.Event, k store.QueueKey, c ghCommand) error {
	cmd := store.QueueCommand{PR: ev.PR}
	switch c.verb {
	case "merge":
		cmd.Kind, cmd.Priority, cmd.NoBatch = store.CommandSubmit, c.priority, c.noBatch
	case "cancel":
		cmd.Kind = store.CommandCancel
	case "retry", "status":
		rec, err := h.Driver.View(ctx, k)
		if err != nil {
			return err
		}
		e, found, err := h.viewEntry(ctx, rec, ev.PR)
		if err != nil {
			return err
		}
		if c.verb == "status" {
			return h.reply(ctx, ev, h.statusLine(k, rec.Snapshot, e, found))
		}
		cmd.Kind = store.CommandRestart
		if e.State.Terminal() { // failed or cancelled: test it again as a new submission
			cmd.Kind = store.CommandSubmit
		}
	}
	err := h.Driver.Record(ctx, k, cmd)
	switch {
	case errs.Is(err, errs.Invalid) || errs.Is(err, errs.NotFound):
		if ev.Kind == github.EventPullRequest && c.verb == "cancel" {
			return nil // the label of a PR that left the queue already
		}
		return h.reply(ctx, ev, fmt.Sprintf("@%s, the merge queue for `%s` refused: %s.", ev.Sender, k.Branch, strings.TrimSuffix(errs.MessageOf(err), ".")))
	case err != nil:
		return err
	}
	if ev.CommentID != 0 {
		// The command is recorded: a lost reaction is no reason to handle
		// the delivery again.
		if err := h.Driver.GitHub.React(ctx, github.Repo{Owner: ev.Repo.Owner, Name: ev.Repo.Name}, ev.CommentID, "+1"); err != nil && h.Driver.Log != nil {
			h.Driver.Log.WarnContext(ctx, "github command: reaction not added", "error", err.Error())
		}
	}
	return nil
}

// viewEntry is PR n's entry in the view rec (pending commands applied),
// else as stored; found is false when it was never submitted.
func (h *Handlers) viewEntry(ctx context.Context, rec store.QueueRecord, n int) (mergequeue.Entry, bool, error) {
	for _, e := range rec.Snapshot.Entries {
		if e.PRNumber == n {
			return e, true, nil
		}
	}
	e, err := h.entry(ctx, rec, n)
	if errs.Is(err, errs.NotFound) {
		return mergequeue.Entry{PRNumber: n}, false, nil
	}
	return e, err == nil, err
}

// statusLine answers /mainguard status.
func (h *Handlers) statusLine(k store.QueueKey, s mergequeue.Snapshot, e mergequeue.Entry, found bool) string {
	if !found {
		return fmt.Sprintf("#%d was never submitted to the merge queue for `%s`.", e.PRNumber, k.Branch)
	}
	line := fmt.Sprintf("#%d is **%s** in the merge queue for `%s`", e.PRNumber, e.State, k.Branch)
	for i, o := range mergequeue.QueueOrder(s) {
		if o.ID == e.ID {
			line += fmt.Sprintf(", position %d", i+1)
		}
	}
	if e.Reason != "" {
		line += fmt.Sprintf(" (`%s`)", e.Reason)
	}
	if h.Driver.DetailsURL != nil {
		line += fmt.Sprintf(". [Details](%s)", h.Driver.DetailsURL(k, e.PRNumber))
	}
	return line + "."
}

// reply comments on ev's pull request or issue. A reply GitHub did not
// take is logged, not retried: the delivery was handled.
func (h *Handlers) reply(ctx context.Context, ev github.Event, body string) error {
	_, err := h.Driver.GitHub.Comment(ctx, github.Repo{Owner: ev.Repo.Owner, Name: ev.Repo.Name}, ev.PR, body)
	if err != nil && h.Driver.Log != nil {
		h.Driver.Log.WarnContext(ctx, "github command: reply not posted", "pr", ev.PR, "error", err.Error())
	}
	return nil
}
