package apply

import (
	"context"
	"sync"
)

// notifier is a coalescing set of work keys whose objects or results
// changed, drained in first-changed order onto one channel. Adding never
// blocks; a key added again before it is taken is not duplicated.
type notifier struct {
	out  chan string
	wake chan struct{} // capacity 1: "something was added"

	// mu guards order and queued.
	mu     sync.Mutex
	order  []string
	queued map[string]bool
}

func newNotifier() *notifier {
	return &notifier{out: make(chan string), wake: make(chan struct{}, 1), queued: map[string]bool{}}
}

// add marks key changed.
func (n *notifier) add(key string) {
	n.mu.Lock()
	if !n.queued[key] {
		n.queued[key] = true
		n.order = append(n.order, key)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest changed key.
func (n *notifier) next() (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.order) == 0 {
		return "", false
	}
	key := n.order[0]
	n.order = n.order[1:]
	delete(n.queued, key)
	return key, true
}

// pump sends changed keys on out until ctx ends.
func (n *notifier) pump(ctx context.Context) {
	for {
		key, ok := n.next()
		if !ok {
			select {
			case <-n.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		select {
		case n.out <- key:
		case <-ctx.Done():
			return
		}
	}
}
