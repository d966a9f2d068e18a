// Package livenesstest holds a fake liveness.Clock for tests that drive
// lease expiry without sleeping. It imports the standard library only.
package livenesstest

import (
	"sync"
	"time"
)

// Clock is a liveness.Clock that moves only when Advance is called. It is
// safe for concurrent use.
type Clock struct {
	mu      sync.Mutex // guards the fields below
	now     time.Time
	waiters []waiter // pending At channels, unordered
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a Clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives once the clock has reached t.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !c.now.Before(t) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: t, ch: ch})
	return ch
}

// Advance moves the clock by d and fires the At channels that came due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if c.now.Before(w.at) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}
