package scheduler

import (
	"context"
	"runtime"
	"time"

	"github.com/tetherproj/tether/hub/store"
)

// inputs are what a session waits on besides its context and timer.
type inputs struct {
	bindings, clusters <-chan store.Event
	leases             <-chan struct{}
}

// input is one thing the loop takes in.
type input struct {
	kind inputKind
	ev   store.Event
	open bool // the watch channel was still open
}

type inputKind int

const (
	inputDone inputKind = iota
	inputBinding
	inputCluster
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
		changed, err := l.take(ctx, next)
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
func (l *Loop) next(ctx context.Context, in inputs, wait bool) (next input, ok bool) {
	if !wait {
		// The store's watch channels are unbuffered: yielding lets their
		// goroutines hand over what etcd has delivered already.
		runtime.Gosched()
		select {
		case ev, open := <-in.bindings:
			return input{kind: inputBinding, ev: ev, open: open}, true
		case ev, open := <-in.clusters:
			return input{kind: inputCluster, ev: ev, open: open}, true
		case <-in.leases:
			return input{kind: inputLease}, true
		default:
			return input{}, false
		}
	}
	select {
	case <-ctx.Done():
		return input{kind: inputDone}, true
	case ev, open := <-in.bindings:
		return input{kind: inputBinding, ev: ev, open: open}, true
	case ev, open := <-in.clusters:
		return input{kind: inputCluster, ev: ev, open: open}, true
	case <-in.leases:
		return input{kind: inputLease}, true
	case <-l.timer:
		return input{kind: inputTimer}, true
	}
}

// take applies one input; refresh reports that the members may have
// changed (a cluster event, a lease change, or the timer: the start-up
// grace may have ended).
func (l *Loop) take(ctx context.Context, in input) (refresh bool, err error) {
	switch in.kind {
	case inputDone:
		return false, ctx.Err()
	case inputBinding:
		if err := eventErr(in.ev, in.open); err != nil {
			return false, err
		}
		l.applyBinding(in.ev)
		return false, nil
	case inputCluster:
		if err := eventErr(in.ev, in.open); err != nil {
			return false, err
		}
		l.applyCluster(in.ev)
		return true, nil
	case inputTimer:
		l.timer, l.armedAt = nil, time.Time{}
		l.dueRechecks()
	}
	return true, nil
}
