package testkit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Stall is how long Await lets a process it waits on go without saying
// anything new before it calls it hung. Starting DynamoDB Local reports
// progress every 10 s (dynamolocal.ProgressEvery), so a slow start on a
// loaded machine never stalls; a wedged one does.
const Stall = 5 * time.Minute

// Await polls cond until it holds, waiting on a process (a child, or a
// program run in this one) that is to bring it about. It fails tb at once,
// with output() (the process's own words), when exited is closed first.
// As guards against a hang, never speed requirements, it also fails when
// output() has not changed for Stall, and a minute before the test
// binary's deadline (go test -timeout), so that a hang is reported with
// its cause rather than as a panic. what names the awaited condition in
// the messages; it is logged every 30 s while the wait lasts.
func Await(tb testing.TB, what string, cond func() bool, exited <-chan struct{}, output func() string) {
	tb.Helper()
	start := time.Now()
	deadline, _ := guardDeadline(tb)
	last, lastChange := output(), start
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	report := time.NewTicker(30 * time.Second)
	defer report.Stop()
	for !cond() {
		select {
		case <-exited:
			if cond() { // it did its part before ending
				return
			}
			tb.Fatalf("waiting for %s: the process ended after %s; its output:\n%s", what, since(start), output())
		case <-report.C:
			tb.Logf("still waiting for %s after %s", what, since(start))
		case <-poll.C:
		}
		now := time.Now()
		if out := output(); out != last {
			last, lastChange = out, now
		}
		switch {
		case now.Sub(lastChange) > Stall:
			tb.Fatalf("waiting for %s: nothing new from the process for %s (a guard against a hang), %s in all; its output:\n%s", what, Stall, since(start), last)
		case !deadline.IsZero() && now.After(deadline):
			tb.Fatalf("waiting for %s: the test binary's deadline is a minute away (a guard against a hang), %s in all; its output:\n%s", what, since(start), last)
		}
	}
}

// AwaitExit waits for exited, closed when a process that was asked to stop
// ends. If it has not ended within grace it calls kill (nil: none) and
// reports the process as not stopping, with its output; it never blocks
// longer than twice grace.
func AwaitExit(tb testing.TB, what string, exited <-chan struct{}, grace time.Duration, kill func(), output func() string) {
	tb.Helper()
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	if kill != nil {
		kill()
	}
	tb.Errorf("%s did not stop within %s of being asked; its output:\n%s", what, grace, output())
	select {
	case <-exited:
	case <-time.After(grace):
		tb.Errorf("%s did not end even then", what)
	}
}

func since(t time.Time) string { return fmt.Sprint(time.Since(t).Round(time.Millisecond)) }

// Context is a context for a test's slow calls (starting DynamoDB Local,
// a child program): it ends a minute before the test binary's deadline
// (go test -timeout), a guard against a hang rather than a speed
// requirement, so that the call fails with its own message instead of the
// binary panicking. It is cancelled when tb ends.
func Context(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	if deadline, ok := guardDeadline(tb); ok {
		ctx, cancel = context.WithDeadlineCause(ctx, deadline, errors.New("the test binary's deadline is a minute away (a guard against a hang)"))
		tb.Cleanup(cancel)
	}
	return ctx
}

// guardDeadline is a minute before the test binary's deadline, if it has
// one.
func guardDeadline(tb testing.TB) (time.Time, bool) {
	if d, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			return dl.Add(-time.Minute), true
		}
	}
	return time.Time{}, false
}
