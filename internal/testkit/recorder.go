package testkit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Recorder is a testing.TB for testing test helpers: the failures it is
// given are recorded, not reported, and everything else (TempDir,
// Cleanup, Deadline, Logf) is the real test's. A Fatal stops the helper as
// FailNow would, by a panic that Do recovers.
type Recorder struct {
	testing.TB
	mu     sync.Mutex
	fatal  string
	errors []string
}

// Deadline is the real test's, for helpers that guard against hangs.
func (r *Recorder) Deadline() (time.Time, bool) {
	if d, ok := r.TB.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

func (r *Recorder) Helper() {}

func (r *Recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *Recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *Recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	panic(r)
}

func (r *Recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// Do runs f, which may stop at a Fatal.
func (r *Recorder) Do(f func()) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f()
}

// Failures are the Fatal message ("" if none) and the errors so far.
func (r *Recorder) Failures() (string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal, append([]string(nil), r.errors...)
}
