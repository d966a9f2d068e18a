// Package storewatchtest starves a test process of CPU, for the tests of
// hub/storewatch and of the hub that check a starved process is not taken
// for a lost store:
//
//	storewatchtest.Starve(80, 5*time.Millisecond, time.Second)
//
// It imports only the standard library.
package storewatchtest

import (
	"runtime"
	"sync"
	"time"
)

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
