package apply

import (
	"sync"
	"time"
)

// eventEvery is the least time between two writes of one Event (one
// object, one failure): failures in between are only counted, and added
// to the Event's count at its next write. Drift repairs may retry a
// failing object ten times a second; the member's API server hears of it
// at most this often.
const eventEvery = 30 * time.Second

// eventsTracked bounds the Events the limiter remembers; past it, those
// not written for eventEvery are forgotten, and if that is not enough, all
// (their next failure is written at once).
const eventsTracked = 4096

// eventLimiter decides which failures are written as Events.
type eventLimiter struct {
	mu   sync.Mutex // guards seen
	seen map[string]eventSeen
}

// eventSeen is one Event's last write and the failures since.
type eventSeen struct {
	written time.Time
	missed  int32
}

func newEventLimiter() *eventLimiter { return &eventLimiter{seen: map[string]eventSeen{}} }

// allow reports whether the Event name is to be written at now, and then
// how many failures it stands for (this one and those not written).
func (l *eventLimiter) allow(name string, now time.Time) (bool, int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.seen[name]
	if ok && now.Sub(s.written) < eventEvery {
		s.missed++
		l.seen[name] = s
		return false, 0
	}
	if !ok && len(l.seen) >= eventsTracked {
		l.prune(now)
	}
	l.seen[name] = eventSeen{written: now}
	return true, s.missed + 1
}

// prune forgets Events not written for eventEvery (their missed failures
// are lost), and all of them when that is not enough. mu is held.
func (l *eventLimiter) prune(now time.Time) {
	for name, s := range l.seen {
		if now.Sub(s.written) >= eventEvery {
			delete(l.seen, name)
		}
	}
	if len(l.seen) >= eventsTracked {
		l.seen = map[string]eventSeen{}
	}
}
