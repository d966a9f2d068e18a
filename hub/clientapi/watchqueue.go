package clientapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetherproj/tether/hub/store"
)

// lagQueue stands between a Watch's etcd watch and its client, so that a
// client reading slowly or not at all costs the hub a bounded buffer: one
// goroutine reads etcd as fast as events come (fillWatch) and the handler
// sends them at the client's pace (next). The etcd client buffers without
// bound for a consumer that blocks, so when the queue is full the etcd
// watch is cancelled, not left unread; once the client has taken half of
// the queue it is opened again from the revision where it stopped. A
// client that falls behind thus reads the rest from etcd's history, and
// its stream ends (OUT_OF_RANGE) if that history is compacted first. A
// client that takes nothing for stall while the queue is full is cut: the
// queue is dropped and, once the client reads again, its stream ends
// RESOURCE_EXHAUSTED (ErrFellBehind), to watch again from the last
// revision it received.
type lagQueue struct {
	maxEvents, maxBytes int
	stall               time.Duration
	// ready is signalled (capacity 1) after each push and at the end;
	// room after each take.
	ready, room chan struct{}

	mu sync.Mutex // guards the fields below
	// items are the events read and not yet taken, oldest first.
	items []store.Event
	// bytes is the size of items' keys and values.
	bytes int
	// end, once set, is what next returns after the items.
	end error
}

func newLagQueue(maxEvents, maxBytes int, stall time.Duration) *lagQueue {
	return &lagQueue{maxEvents: maxEvents, maxBytes: maxBytes, stall: stall, ready: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// watchPos is where a paused watch resumes: after the first n events of
// revision rev (etcd replays a revision's events in the same order).
type watchPos struct {
	rev int64
	n   int
}

func (p *watchPos) advance(ev store.Event) {
	if ev.KV.Revision != p.rev {
		p.rev, p.n = ev.KV.Revision, 0
	}
	p.n++
}

// watchSource is the store watch a lagQueue is filled from.
type watchSource struct {
	// open watches from revision from (0: now) until ctx ends.
	open func(ctx context.Context, from int64) <-chan store.Event
	// again tells a client whose revision was compacted what to do.
	again string
}

// prefixSource watches the keys under prefix, for Watch.
func prefixSource(st *store.Store, prefix string) watchSource {
	return watchSource{
		open:  func(ctx context.Context, from int64) <-chan store.Event { return st.Watch(ctx, prefix, from) },
		again: "List again and watch from the list's revision",
	}
}

// fillWatch feeds q with the events of src that keep selects, from
// revision from (0: now), until ctx ends or the watch fails, pausing the
// etcd watch while q is full; cut is called when q's client stalled.
func fillWatch(ctx context.Context, q *lagQueue, src watchSource, from int64, keep func(store.Event) bool, cut func()) {
	var pos watchPos
	for {
		wctx, cancel := context.WithCancel(ctx)
		full, err := q.fill(wctx, src.open(wctx, from), keep, &pos)
		cancel()
		if errors.Is(err, store.ErrCompacted) {
			err = compacted(from, pos, src.again, err)
		}
		if !full {
			q.finish(err)
			return
		}
		if err := q.waitRoom(ctx); errors.Is(err, ErrFellBehind) {
			q.drop(err)
			cut()
			return
		} else if err != nil {
			q.finish(err)
			return
		}
		from = pos.rev
	}
}

// compacted says which revision of a watch from revision from, stopped at
// pos, was compacted.
func compacted(from int64, pos watchPos, again string, err error) error {
	if pos.rev == 0 {
		return fmt.Errorf("watch from revision %d: that revision was compacted; %s: %w", from-1, again, err)
	}
	return fmt.Errorf("watch: the client read too slowly: revision %d, which it had not read yet, was compacted meanwhile; %s: %w",
		pos.rev, again, err)
}

// fill reads in into q, skipping what pos says was read before. It
// returns full when q had no room for an event (that event unread), else
// the error that ended in.
func (q *lagQueue) fill(ctx context.Context, in <-chan store.Event, keep func(store.Event) bool, pos *watchPos) (full bool, err error) {
	skip := pos.n
	for ev := range in {
		switch {
		case ev.Err != nil:
			return false, ev.Err
		case skip > 0 && ev.KV.Revision == pos.rev:
			skip--
			continue
		case keep(ev) && !q.push(ev):
			return true, nil
		}
		skip = 0
		pos.advance(ev)
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return false, fmt.Errorf("watch: ended by the store")
}

// push queues ev unless q is full. One event always fits, however large:
// the store bounds each object.
func (q *lagQueue) push(ev store.Event) bool {
	size := len(ev.KV.Key) + len(ev.KV.Value)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) > 0 && (len(q.items) >= q.maxEvents || q.bytes+size > q.maxBytes) {
		return false
	}
	q.items = append(q.items, ev)
	q.bytes += size
	signal(q.ready)
	return true
}

// waitRoom waits until the client has taken half of q; it fails with
// ErrFellBehind when the client takes nothing for q.stall.
func (q *lagQueue) waitRoom(ctx context.Context) error {
	stalled := time.NewTimer(q.stall)
	defer stalled.Stop()
	for {
		q.mu.Lock()
		roomy := len(q.items) <= q.maxEvents/2 && q.bytes <= q.maxBytes/2
		q.mu.Unlock()
		if roomy {
			return nil
		}
		select {
		case <-q.room:
			stalled.Reset(q.stall)
		case <-stalled.C:
			return fmt.Errorf("%w: the client took no event for %s while the %d events (at most %d, or %d bytes) the hub holds for it waited; watch again from the revision of the last event received",
				ErrFellBehind, q.stall, q.len(), q.maxEvents, q.maxBytes)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *lagQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// drop ends q with err at once, forgetting the events not yet taken: the
// client resumes from the last one it received.
func (q *lagQueue) drop(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.items)
	q.items, q.bytes, q.end = nil, 0, err
	signal(q.ready)
}

// finish ends q with err once the events before it are taken.
func (q *lagQueue) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.end == nil {
		q.end = err
	}
	signal(q.ready)
}

// next takes the oldest event, waiting for one; after the last it
// returns the error that ended q, or ctx's.
func (q *lagQueue) next(ctx context.Context) (store.Event, error) {
	for {
		if ev, ok, err := q.take(); ok {
			return ev, err
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return store.Event{}, ctx.Err()
		}
	}
}

// take is next without waiting: ok is false when there is nothing yet.
func (q *lagQueue) take() (store.Event, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return store.Event{}, q.end != nil, q.end
	}
	ev := q.items[0]
	q.items[0] = store.Event{} // let the taken value be collected
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // and the array, once drained
	}
	q.bytes -= len(ev.KV.Key) + len(ev.KV.Value)
	signal(q.room)
	return ev, true, nil
}

// signal wakes the waiter on c, if any, without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
