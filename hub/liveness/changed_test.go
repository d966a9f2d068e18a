package liveness

import (
	"context"
	"testing"
	"time"
)

// waiter releases one revision per value sent on next, and tells entered
// each time the follower comes back to wait (it has handled the last one).
type waiter struct {
	next    chan uint64
	entered chan struct{}
}

func (w waiter) Wait(ctx context.Context, after uint64) (uint64, error) {
	w.entered <- struct{}{}
	select {
	case rev := <-w.next:
		return rev, nil
	case <-ctx.Done():
		return after, ctx.Err()
	}
}

func TestChangedSignalsWithoutPilingUpAndStops(t *testing.T) {
	w := waiter{next: make(chan uint64), entered: make(chan struct{}, 8)}
	changes, stop := Changed(context.Background(), w)
	for rev := uint64(1); rev <= 3; rev++ {
		w.next <- rev // three changes while nobody reads
	}
	for range 4 { // the first wait and one after each change: all signalled
		<-w.entered
	}
	select {
	case <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after three changes")
	}
	select {
	case <-changes:
		t.Error("a second signal for changes already signalled; want them folded into one")
	case <-time.After(50 * time.Millisecond):
	}
	stop() // returns only after the follower exited
	select {
	case w.next <- 4:
		t.Error("the follower still waits after stop")
	case <-time.After(50 * time.Millisecond):
	}
}
