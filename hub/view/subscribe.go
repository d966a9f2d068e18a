package view

import (
	"context"
	"strings"
	"sync"
)

// Subscription tells one reader what changed in the view. Changes are
// coalesced by key: however slow the reader, it holds at most one pending
// mark per key held, and the view never waits for it.
type Subscription struct {
	v        *View
	prefixes []string
	ready    chan struct{} // one token: something is pending

	// mu guards the marks; taken after v.mu when both are.
	mu       sync.Mutex
	pending  map[string]bool
	full     bool // the next Take returns everything
	advanced bool // the view's revision moved
}

// Batch is what a Take returns: the changes since the previous Take, or
// (Full) every object under the subscription's prefixes, all as of
// Revision, at which the view holds every change up to it.
type Batch struct {
	Revision int64
	// Full says Changes hold every object: the first batch, the first after
	// the view listed again, or after Relist. The reader replaces what it
	// holds.
	Full    bool
	Changes []Change
}

// Subscribe returns a subscription to the objects under prefixes (held
// prefixes of the view, or prefixes under one: a full batch then lists
// the held prefix and keeps those under it). Its first batch, once the view is synced, is
// Full. Close it when done.
func (v *View) Subscribe(prefixes ...string) *Subscription {
	s := &Subscription{v: v, prefixes: prefixes, ready: make(chan struct{}, 1), pending: map[string]bool{}, full: true}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.subs[s] = struct{}{}
	select {
	case <-v.synced:
		s.signal()
	default: // the first list signals
	}
	return s
}

// Close stops the subscription.
func (s *Subscription) Close() {
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	delete(s.v.subs, s)
}

// Ready receives when a Take has something: changes, a revision moved,
// or a full batch.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Relist makes the next Take Full, and Ready receive.
func (s *Subscription) Relist() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = true
	s.signal()
}

// Take returns what changed since the previous Take (coalesced to each
// key's object now), as of one revision.
func (s *Subscription) Take() Batch {
	s.v.mu.RLock()
	defer s.v.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := Batch{Revision: s.v.rev, Full: s.full}
	if s.full {
		for _, o := range s.v.listLocked(s.prefixes) {
			b.Changes = append(b.Changes, Change{Key: o.Key, Object: o})
		}
	} else {
		for key := range s.pending {
			b.Changes = append(b.Changes, s.v.changeLocked(key))
		}
	}
	s.full, s.advanced = false, false
	clear(s.pending)
	return b
}

// Each subscribes to prefixes and hands each batch to apply, in turn,
// until ctx ends; then it returns nil. It is the whole loop of a reader
// that waits on nothing else (a full batch: the view's first list, or a
// new list after a store failure).
func (v *View) Each(ctx context.Context, apply func(Batch), prefixes ...string) error {
	sub := v.Subscribe(prefixes...)
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
			apply(sub.Take())
		}
	}
}

// note marks changed keys (or, listed, everything); v.mu is held.
func (s *Subscription) note(changed map[string]bool, listed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if listed {
		s.full = true
		clear(s.pending)
	}
	for key := range changed {
		if !s.full && s.wants(key) {
			s.pending[key] = true
		}
	}
	s.advanced = true
	s.signal()
}

func (s *Subscription) wants(key string) bool {
	for _, p := range s.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// signal makes Ready receive, once however many marks wait.
func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// changeLocked is key's change now; v.mu is held.
func (v *View) changeLocked(key string) Change {
	p, ok := v.prefixOf(key)
	if !ok {
		return Change{Key: key}
	}
	o, ok := v.objects[p.Prefix].Get(key)
	if !ok {
		return Change{Key: key}
	}
	return Change{Key: key, Object: o.(*Object)}
}

// WaitFull waits for the subscription's next full batch (the first one,
// or the one after Relist or after the view listed again), dropping the
// changes before it, which it holds; false when ctx ended first.
func (s *Subscription) WaitFull(ctx context.Context) (Batch, bool) {
	for {
		select {
		case <-ctx.Done():
			return Batch{}, false
		case <-s.ready:
		}
		if b := s.Take(); b.Full {
			return b, true
		}
	}
}
