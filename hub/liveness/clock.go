package liveness

import "time"

// Clock is the time source of Leases.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// At returns a channel that receives once the clock has reached t, at
	// once if it already has.
	At(t time.Time) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// At returns a channel that receives at t. An unread timer is collected by
// the runtime (Go 1.23+), so a caller may drop the channel.
func (RealClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }
