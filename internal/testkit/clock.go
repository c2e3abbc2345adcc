package testkit

import (
	"fmt"
	"sync"
	"time"
)

// Clock is a clock a test drives, safe for the goroutines of the code
// under test: it stands still until told to move.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now is the clock's time; pass the method value as a Now func.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Numbered makes ids 1, 2, 3, … spelled by format (one %d verb), safe
// for concurrent use, so that ids in golden files do not change from run to
// run.
func Numbered(format string) func() string {
	var (
		mu sync.Mutex
		n  int
	)
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf(format, n)
	}
}

// UUIDs makes numbered, valid version-4 uuids:
// 00000000-0000-4000-8000-000000000001, …
func UUIDs() func() string { return Numbered("00000000-0000-4000-8000-%012d") }
