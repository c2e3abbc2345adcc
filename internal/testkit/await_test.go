package testkit

import (
	"strings"
	"testing"
	"time"
)

// TestAwaitFailsAtOnceWhenTheProcessEnds: the wait ends as soon as the
// process it waits on has ended, with the process's own words, however
// long the guards would have let it wait.
func TestAwaitFailsAtOnceWhenTheProcessEnds(t *testing.T) {
	t.Parallel()
	exited := make(chan struct{})
	close(exited)
	r := &Recorder{TB: t}
	start := time.Now()
	r.Do(func() {
		Await(r, "the server to serve", func() bool { return false }, exited, func() string { return "listen tcp: address already in use" })
	})
	fatal, _ := r.Failures()
	if !strings.Contains(fatal, "the process ended") || !strings.Contains(fatal, "address already in use") {
		t.Errorf("got %q", fatal)
	}
	if d := time.Since(start); d > Stall/2 {
		t.Errorf("took %s", d)
	}
}

// TestAwaitReturnsWhatCameBeforeTheEnd: a process that did its part and
// then ended is no failure, even when the wait sees the end first.
func TestAwaitReturnsWhatCameBeforeTheEnd(t *testing.T) {
	t.Parallel()
	exited := make(chan struct{})
	close(exited)
	looks := 0
	r := &Recorder{TB: t}
	r.Do(func() {
		Await(r, "done", func() bool { looks++; return looks > 1 }, exited, func() string { return "" })
	})
	if fatal, errs := r.Failures(); fatal != "" || len(errs) != 0 || looks != 2 {
		t.Errorf("got %q %q after %d looks", fatal, errs, looks)
	}
}

// TestAwaitExitNeverBlocks: a process that does not stop is killed and
// reported, and the wait ends.
func TestAwaitExitNeverBlocks(t *testing.T) {
	t.Parallel()
	exited := make(chan struct{})
	killed := false
	r := &Recorder{TB: t}
	AwaitExit(r, "serve", exited, 10*time.Millisecond, func() { killed = true }, func() string { return "still serving" })
	_, errs := r.Failures()
	if !killed || len(errs) != 2 || !strings.Contains(errs[0], "still serving") {
		t.Errorf("killed %v, errors %q", killed, errs)
	}
	close(exited)
	r = &Recorder{TB: t}
	AwaitExit(r, "serve", exited, time.Hour, nil, func() string { return "" })
	if _, errs := r.Failures(); len(errs) != 0 {
		t.Errorf("a process that ended: %q", errs)
	}
}
