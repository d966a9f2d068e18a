package clusters

import (
	"context"
	"time"
)

// Run expires leases until ctx ends, then returns nil: a cluster whose last
// heartbeat is older than the lease duration turns Unknown.
func (l *Leases) Run(ctx context.Context) error {
	for {
		next, ok := l.expire()
		var timer <-chan time.Time
		if ok {
			timer = l.clock.At(next)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer:
		case <-l.kick:
		}
	}
}

// expire turns every lease that ran out Unknown, and returns when the next
// valid lease runs out; ok is false when none is valid.
func (l *Leases) expire() (next time.Time, ok bool) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	changed := false
	for _, cur := range l.leases {
		if cur.State == StateUnknown {
			continue
		}
		end := cur.LastHeartbeat.Add(l.duration)
		if !now.Before(end) {
			cur.State, cur.Since = StateUnknown, end
			changed = true
			continue
		}
		if !ok || end.Before(next) {
			next, ok = end, true
		}
	}
	if changed {
		l.bumpLocked()
	}
	return next, ok
}
