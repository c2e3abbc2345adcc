package queuesvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/store"
)

// Clients' commands (submit, cancel, restart) do not write the snapshot.
// Record checks a command against the queue as its PR's pending commands
// will leave it, writes it as its own item and answers: the only condition
// it meets is its own key's, so any number of clients command one queue
// without a conflict. Fold then applies the pending commands in order,
// marking them folded in the transaction that saves the snapshot (so each
// applies exactly once), performs their effects, advances the queue and
// deletes them. Who folds: the table's stream (deployed, the
// fold-queue-commands function), the local server's background folder,
// the test service at once (AfterRecord), and every tick for commands
// none of those reached.

// Record checks c (its Kind, PR, Priority and NoBatch) against queue k and
// records it: errors are the engine's (400, 404) or the
// store's, never a conflict with another client. It then calls
// AfterRecord, if set.
func (d *Service) Record(ctx context.Context, k store.QueueKey, c store.QueueCommand) error {
	rec, cmds, err := d.Store.QueueWithCommands(ctx, k)
	if err != nil {
		return err
	}
	// Whether a command applies, and the id a submit gives, depend on its
	// PR's entry alone: the other PRs' pending commands are not applied
	// (with many writers they are most of the work).
	view := d.view(rec, commandsOf(cmds, c.PR))
	if c.Kind == store.CommandSubmit {
		// The entry's id is chosen now, so that the view shows the PR
		// under the id it keeps once folded.
		if c.EntryID, err = d.entryID(ctx, view, c.PR); err != nil {
			return err
		}
	}
	if _, _, err := d.apply(view, c); err != nil {
		return err
	}
	seen := []string{rec.LastCommand}
	for _, o := range cmds {
		seen = append(seen, o.SK)
	}
	c.QueueID, c.At = rec.ID, d.Now()
	c.SK = store.NewCommandSK(c.At, seen...)
	if err := d.Store.PutQueueCommand(ctx, k, c); err != nil {
		return err
	}
	if d.AfterRecord != nil {
		d.AfterRecord(ctx, k)
	}
	return nil
}

// View is queue k as it will be once its pending commands are folded: the
// stored snapshot with them applied in memory, nothing written. Readers
// see their own commands at once through it. One Query.
func (d *Service) View(ctx context.Context, k store.QueueKey) (store.QueueRecord, error) {
	rec, cmds, err := d.Store.QueueWithCommands(ctx, k)
	if err != nil {
		return store.QueueRecord{}, err
	}
	return d.view(rec, cmds), nil
}

// folding is the result of applying commands to a record: the record
// after them, the merged output and transitions, the commands done (that
// applied, or can never apply), and why those that can never apply were
// refused.
type folding struct {
	rec     store.QueueRecord
	out     mergequeue.Output
	trans   []mergequeue.TransitionRecord
	done    []store.QueueCommand
	refused []string
}

// commandsOf are the commands of cmds that name PR n.
func commandsOf(cmds []store.QueueCommand, n int) []store.QueueCommand {
	var out []store.QueueCommand
	for _, c := range cmds {
		if c.PR == n {
			out = append(out, c)
		}
	}
	return out
}

// ViewPR is View for a reader of PR n alone: the snapshot with n's
// pending commands applied. Its other entries may lag their commands.
func (d *Service) ViewPR(ctx context.Context, k store.QueueKey, n int) (store.QueueRecord, error) {
	rec, cmds, err := d.Store.QueueWithCommands(ctx, k)
	if err != nil {
		return store.QueueRecord{}, err
	}
	return d.view(rec, commandsOf(cmds, n)), nil
}

// view is rec with those of cmds still pending for it applied in memory:
// what a reader sees. It keeps only the snapshot, not what a save needs
// (output, transitions, metrics clocks), which under many writers is most
// of the work: every read applies every pending command.
func (d *Service) view(rec store.QueueRecord, cmds []store.QueueCommand) store.QueueRecord {
	version := rec.Snapshot.Version // as read: applying commands moves it on
	for _, c := range cmds {
		if !c.Pending(version) || c.QueueID != rec.ID {
			continue
		}
		if s, _, err := d.apply(rec, c); err == nil {
			rec.Snapshot = s
		}
	}
	return rec
}

// fold applies to rec, in order, those of cmds still pending for it, for a
// save. A command the queue now refuses (a cancel of a PR that merged
// meanwhile) is done all the same: the client learns the outcome from the
// PR's state, as it would had its command come a moment later.
func (d *Service) fold(rec store.QueueRecord, cmds []store.QueueCommand) folding {
	f := folding{rec: rec}
	version := rec.Snapshot.Version
	for _, c := range cmds {
		if !c.Pending(version) {
			continue
		}
		f.done = append(f.done, c)
		f.rec.LastCommand = max(f.rec.LastCommand, c.SK)
		if c.QueueID != f.rec.ID {
			continue // given to an earlier queue on the branch
		}
		s, o, err := d.apply(f.rec, c)
		if err != nil {
			f.refused = append(f.refused, fmt.Sprintf("%s of PR %d: %v", c.Kind, c.PR, err))
			continue
		}
		var t []mergequeue.TransitionRecord
		f.rec, t = f.rec.Advance(s, o.Transitions)
		f.trans = append(f.trans, t...)
		f.out = merge(f.out, o)
	}
	return f
}

// apply runs command c on rec's snapshot.
func (d *Service) apply(rec store.QueueRecord, c store.QueueCommand) (mergequeue.Snapshot, mergequeue.Output, error) {
	now := d.Now()
	switch c.Kind {
	case store.CommandSubmit:
		sr := mergequeue.SubmitRequest{PRNumber: c.PR, Priority: c.Priority, NoBatch: c.NoBatch, EntryID: c.EntryID}
		return mergequeue.Submit(rec.Snapshot, sr, now, d.NewID)
	case store.CommandCancel:
		return mergequeue.Cancel(rec.Snapshot, mergequeue.CancelRequest{PRNumber: c.PR}, now)
	case store.CommandRestart:
		return mergequeue.Restart(rec.Snapshot, mergequeue.RestartRequest{PRNumber: c.PR}, now)
	}
	return rec.Snapshot, mergequeue.Output{}, errs.E(errs.Internal, "unknown queue command %q", c.Kind)
}

// entryID is the id PR n's entry will have in queue rec: "" when the
// snapshot holds it, the stored one when the snapshot pruned it, else a
// new one.
func (d *Service) entryID(ctx context.Context, rec store.QueueRecord, n int) (string, error) {
	if slices.ContainsFunc(rec.Snapshot.Entries, func(e mergequeue.Entry) bool { return e.PRNumber == n }) {
		return "", nil
	}
	old, err := d.Store.QueueEntry(ctx, rec, n)
	switch {
	case err == nil:
		return old.Entry.ID, nil
	case errs.Is(err, errs.NotFound):
		return d.NewID(), nil
	}
	return "", err
}

// merge is the output of two calls in a row: effects and transitions in
// order, entries and runs in their last state.
func merge(a, b mergequeue.Output) mergequeue.Output {
	a.Effects = append(a.Effects, b.Effects...)
	a.Transitions = append(a.Transitions, b.Transitions...)
	a.Entries = lastOf(a.Entries, b.Entries, func(e mergequeue.Entry) string { return e.ID })
	a.Runs = lastOf(a.Runs, b.Runs, func(r mergequeue.Run) string { return r.ID })
	return a
}

// lastOf appends b to a, a later element replacing an earlier one of the
// same id in its place.
func lastOf[T any](a, b []T, id func(T) string) []T {
	for _, x := range b {
		if i := slices.IndexFunc(a, func(y T) bool { return id(y) == id(x) }); i >= 0 {
			a[i] = x
		} else {
			a = append(a, x)
		}
	}
	return a
}

// Fold applies queue k's pending commands (store.MaxFold per save, until
// none is left), performs their effects and advances the queue, then
// deletes the commands folded into the saved snapshot. A save lost to
// another folder is read again: the other took some commands, and what is
// left is folded on top of its snapshot. Commands of a queue that is gone
// are deleted.
func (d *Service) Fold(ctx context.Context, k store.QueueKey) error {
	if ok, err := d.owned(ctx, k); err != nil || !ok {
		return err
	}
	var (
		last   store.QueueRecord
		cmds   []store.QueueCommand
		folded bool
		carry  outcomes
	)
	for round := 0; ; round++ {
		var rec store.QueueRecord
		var err error
		rec, cmds, err = d.Store.QueueWithCommands(ctx, k)
		if errs.Is(err, errs.NotFound) {
			return d.Store.DropQueueCommands(ctx, k, cmds)
		}
		if err != nil {
			return err
		}
		last = rec
		var todo []store.QueueCommand
		for _, c := range cmds {
			if c.FoldedIn == 0 && len(todo) < store.MaxFold {
				todo = append(todo, c)
			}
		}
		if len(todo) == 0 {
			break
		}
		f := d.fold(rec, todo)
		if f.rec.Snapshot.Version == rec.Snapshot.Version {
			f.rec.Snapshot.Version++ // nothing applied: the marks still need a version of their own
		}
		err = d.save(ctx, f.rec, rec.Snapshot.Version, f.out, facts{}, f.trans, f.done)
		if errs.Is(err, errs.Conflict) {
			if round >= maxCommandTries*4 {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		for _, why := range f.refused {
			d.log().InfoContext(ctx, "merge queue: command no longer applies", "queue", k.String(), "command", why)
		}
		last, folded = f.rec, true
		carry.add(d.perform(ctx, k, f.out.Effects))
	}
	var gone []store.QueueCommand
	for _, c := range cmds {
		if c.FoldedIn != 0 && c.FoldedIn <= last.Snapshot.Version {
			gone = append(gone, c)
		}
	}
	if err := d.Store.DropQueueCommands(ctx, k, gone); err != nil {
		return err
	}
	if !folded {
		return nil
	}
	return d.advance(ctx, last, carry)
}

// FoldNow folds queue k before it returns, logging a failure (the next
// tick folds again): AfterRecord where answers may wait for it.
func (d *Service) FoldNow(ctx context.Context, k store.QueueKey) {
	if err := d.Fold(ctx, k); err != nil {
		d.log().WarnContext(ctx, "merge queue: commands not folded; next tick retries", "queue", k.String(), "error", err.Error())
	}
}

// FoldPending folds the commands of up to limit queues that have any: the
// tick's safety net for commands whose fold was never triggered.
func (d *Service) FoldPending(ctx context.Context, limit int32) (int, error) {
	ks, err := d.Store.QueuesWithCommands(ctx, limit)
	if err != nil {
		return 0, err
	}
	for _, k := range ks {
		d.FoldNow(ctx, k)
	}
	return len(ks), nil
}

// Background folds in a long-lived process (the local server): Notify
// returns at once, and one goroutine per queue folds until no notice came
// during its fold, so a burst of commands costs a few folds, not one each.
type Background struct {
	Driver *Service
	Ctx    context.Context // the process's: a fold outlives the request

	mu    sync.Mutex
	state map[string]*bgQueue
	wg    sync.WaitGroup
}

type bgQueue struct {
	running, again bool
}

// Notify asks for a fold of queue k.
func (b *Background) Notify(_ context.Context, k store.QueueKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == nil {
		b.state = map[string]*bgQueue{}
	}
	q := b.state[k.String()]
	if q == nil {
		q = &bgQueue{}
		b.state[k.String()] = q
	}
	if q.running {
		q.again = true
		return
	}
	q.running = true
	b.wg.Go(func() { b.run(k, q) })
}

func (b *Background) run(k store.QueueKey, q *bgQueue) {
	for {
		b.Driver.FoldNow(b.Ctx, k)
		b.mu.Lock()
		if !q.again || b.Ctx.Err() != nil {
			q.running = false
			delete(b.state, k.String())
			b.mu.Unlock()
			return
		}
		q.again = false
		b.mu.Unlock()
	}
}

// Wait waits for the folds under way to end.
func (b *Background) Wait() { b.wg.Wait() }

// FoldStream is the fold-queue-commands function: the table's stream,
// filtered to command inserts, names the queues to fold. Other records are
// skipped whatever the filter. A queue that could not be folded fails the
// batch, which Lambda retries; the tick is the safety net beyond that.
func (d *Service) FoldStream(ctx context.Context, ev events.DynamoDBEvent) error {
	var (
		ks   []store.QueueKey
		seen = map[string]bool{}
	)
	for _, rec := range ev.Records {
		if k, ok := store.InsertedCommandQueue(rec); ok && !seen[k.String()] {
			seen[k.String()] = true
			ks = append(ks, k)
		}
	}
	var failed error
	for _, k := range ks {
		if err := d.Fold(ctx, k); err != nil {
			failed = errors.Join(failed, err)
		}
	}
	return failed
}
