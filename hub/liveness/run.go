package liveness

import (
	"context"
	"time"
)

// Run expires leases until ctx ends, then returns nil: a cluster whose last
// heartbeat is older than the lease duration turns Unknown. Unless the
// pause check is off, it also wakes every pauseTick to notice a pause.
func (l *Leases) Run(ctx context.Context) error {
	for {
		next, ok := l.expire()
		if l.pause >= 0 {
			tick := l.clock.Now().Add(pauseTick)
			if !ok || tick.Before(next) {
				next, ok = tick, true
			}
		}
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
// valid lease runs out; ok is false when none is valid. After a pause
// (checkPauseLocked) nothing expires before holdUntil. A lease turns Unknown
// since now, when the hub sees it, so that tolerations of the unreachable
// taint never count time the hub did not watch.
func (l *Leases) expire() (next time.Time, ok bool) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if gap := l.checkPauseLocked(now); gap > 0 {
		l.log.Warn("the hub was not running; lease expiry held for one lease so that agents can renew theirs first",
			"paused_for", gap.Round(time.Millisecond), "held_until", l.holdUntil.Format(time.RFC3339))
	}
	changed := false
	for _, cur := range l.leases {
		if cur.State == StateUnknown {
			continue
		}
		end := cur.LastHeartbeat.Add(l.duration)
		if end.Before(l.holdUntil) {
			end = l.holdUntil
		}
		if !now.Before(end) {
			cur.State, cur.Since = StateUnknown, now
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

// checkPauseLocked notices a gap since the last expire longer than
// pauseTick plus the threshold: the hub was not running, so the heartbeats
// of that time may be waiting to be read. It holds every expiry for one
// lease duration from now and returns the gap (zero: no pause). l.mu must
// be held.
func (l *Leases) checkPauseLocked(now time.Time) time.Duration {
	last := l.awake
	l.awake = now
	gap := now.Sub(last)
	if l.pause < 0 || last.IsZero() || gap <= pauseTick+l.pause {
		return 0
	}
	l.holdUntil = now.Add(l.duration)
	l.pauses++
	return gap
}
