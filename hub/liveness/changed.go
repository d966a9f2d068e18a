package liveness

import (
	"context"
	"sync"
)

// Waiter is what Changed follows: *Leases, or a consumer's narrower
// interface over it.
type Waiter interface {
	// Wait blocks until the revision is past after, or ctx ends.
	Wait(ctx context.Context, after uint64) (uint64, error)
}

// Changed follows w in a goroutine and signals the returned channel after
// every change, without piling up signals: a consumer that was busy sees
// one signal for several changes. stop ends the goroutine and waits for it.
func Changed(ctx context.Context, w Waiter) (changes <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var rev uint64
		for {
			var err error
			if rev, err = w.Wait(ctx, rev); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, func() {
		cancel()
		wg.Wait()
	}
}
