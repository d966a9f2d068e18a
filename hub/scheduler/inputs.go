package scheduler

import (
	"context"
	"strings"
	"time"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// inputs are what a session waits on besides its context and timer.
type inputs struct {
	view   *view.Subscription
	leases <-chan struct{}
}

type inputKind int

const (
	inputDone inputKind = iota
	inputView
	inputLease
	inputTimer
)

// takeBatch waits for one input, takes in the ones already waiting (up
// to maxBatch in all), then refreshes the members once if any of them
// may have changed them.
func (l *Loop) takeBatch(ctx context.Context, in inputs) error {
	refresh := false
	for n := 0; n < maxBatch; n++ {
		next, ok := l.next(ctx, in, n == 0)
		if !ok {
			break
		}
		changed, err := l.take(ctx, in, next)
		if err != nil {
			return err
		}
		refresh = refresh || changed
	}
	if refresh {
		l.refreshMembers()
	}
	return nil
}

// next returns the next input, waiting for it when wait is set; without
// wait, ok is false when none is waiting.
func (l *Loop) next(ctx context.Context, in inputs, wait bool) (next inputKind, ok bool) {
	if !wait {
		select {
		case <-in.view.Ready():
			return inputView, true
		case <-in.leases:
			return inputLease, true
		default:
			return 0, false
		}
	}
	select {
	case <-ctx.Done():
		return inputDone, true
	case <-in.view.Ready():
		return inputView, true
	case <-in.leases:
		return inputLease, true
	case <-l.timer:
		return inputTimer, true
	}
}

// take applies one input; refresh reports that the members may have
// changed (a cluster changed, a lease changed, or the timer: the start-up
// grace may have ended). A full batch of the view loads the loop anew.
func (l *Loop) take(ctx context.Context, in inputs, kind inputKind) (refresh bool, err error) {
	switch kind {
	case inputDone:
		return false, ctx.Err()
	case inputView:
		b := in.view.Take()
		l.taken = b.Revision
		if b.Full {
			return false, l.load(ctx, b)
		}
		for _, c := range b.Changes {
			if strings.HasPrefix(c.Key, store.ClustersPrefix) {
				l.applyCluster(c)
				refresh = true
			} else {
				l.applyBinding(c)
			}
		}
		return refresh, nil
	case inputTimer:
		l.timer, l.armedAt = nil, time.Time{}
		l.dueRechecks()
	}
	return true, nil
}
