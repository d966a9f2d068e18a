package customizations

import "sync"

// feed hands the scope of every change the Watcher applied to its target
// to each subscription.
type feed struct {
	mu   sync.Mutex // guards subs
	subs map[*Subscription]struct{}
}

// Subscription receives the scopes of the changes applied after it was
// made, coalesced: Ready is signalled when some are pending, and Take
// returns them all at once. Whoever subscribes closes it.
type Subscription struct {
	feed  *feed
	ready chan struct{} // capacity 1: one signal stands for any number of changes

	mu      sync.Mutex // guards pending
	pending Scope
}

// subscribe returns a new subscription.
func (f *feed) subscribe() *Subscription {
	s := &Subscription{feed: f, ready: make(chan struct{}, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[*Subscription]struct{}{}
	}
	f.subs[s] = struct{}{}
	return s
}

// publish hands sc to every subscription; it never blocks.
func (f *feed) publish(sc Scope) {
	if sc.Empty() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.mu.Lock()
		s.pending.add(sc)
		s.mu.Unlock()
		select {
		case s.ready <- struct{}{}:
		default:
		}
	}
}

// Ready is signalled when changes are pending. A nil subscription's is a
// nil channel, never ready, so that a loop can select on it either way.
func (s *Subscription) Ready() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.ready
}

// Take returns the pending changes' scope and clears it.
func (s *Subscription) Take() Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.pending
	s.pending = Scope{}
	return sc
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	delete(s.feed.subs, s)
}
