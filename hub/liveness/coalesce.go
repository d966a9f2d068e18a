package liveness

import (
	"time"

	"google.golang.org/protobuf/proto"
)

// item is one cluster's write in a flush: the pending heartbeat it comes
// from (h), the record as it stands once written (next), and the digest
// of the content last written (last).
type item struct {
	cluster string
	h       pendingHB
	next    published
	last    string
}

// due takes from pending what a flush at now writes (plan). Content that
// waits for ContentInterval stays pending, and is written at the first
// flush after the interval has passed, unless newer content replaced it.
func (p *Publisher) due(now time.Time) []item {
	p.mu.Lock()
	defer p.mu.Unlock()
	items := make([]item, 0, len(p.pending))
	for cluster, h := range p.pending {
		last, ok := p.written[cluster]
		next, write, wait := p.plan(h, last, ok, now)
		if !wait {
			delete(p.pending, cluster)
		}
		if write {
			items = append(items, item{cluster: cluster, h: h, next: next, last: last.digest})
		}
	}
	return items
}

// plan says what a flush at now writes of h, a cluster's pending
// heartbeat, after last (ok: something was written): next is the record
// as it will stand; write, whether anything is due; wait, whether h's
// content waits. New content is written when the cluster is new to this
// replica, when ContentInterval has passed since the last content write,
// or when it changes the cluster's state and no other state change was
// written early within ContentInterval. While it waits, a renewal naming
// the content last written goes when due, so the lease is renewed as
// before.
func (p *Publisher) plan(h pendingHB, last published, ok bool, now time.Time) (next published, write, wait bool) {
	if !ok {
		return published{hb: h.hb, at: h.at, contentAt: now}, true, false
	}
	next = last
	next.at = h.at
	if proto.Equal(last.hb, h.hb) {
		return next, true, false
	}
	switch {
	case now.Sub(last.contentAt) >= p.interval:
	case stateOf(last.hb) != stateOf(h.hb) && now.Sub(last.urgentAt) >= p.interval:
		next.urgentAt = now
	default:
		return next, now.Sub(last.at) >= p.refresh, true
	}
	next.hb, next.contentAt = h.hb, now
	return next, true, false
}

// Refused returns how many heartbeats past the limits were not written.
func (p *Publisher) Refused() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}
