package hub

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// SetStoreProbe makes h's store watch call probe instead of the store's
// Reachable, for tests of what the hub does when its store does not answer.
func SetStoreProbe(h *Hub, probe func(ctx context.Context) error) { h.storeProbe = probe }

// Starve starves this process of CPU for d: on one thread for Go code,
// n goroutines each work for work and sleep a millisecond, in turn; then
// the process gets its threads back.
func Starve(n int, work, d time.Duration) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for start := time.Now(); time.Since(start) < work; { // work
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(d) // the starvation's length, not a wait for a condition
	close(stop)
	wg.Wait()
}
