// Package runtest runs a component's Run(ctx) error in a test the way its
// owner would: in a goroutine until the test ends or the test stops it,
// then cancelled and waited for, the test failing when Run returned an
// error after the cancel.
//
//	stop := runtest.Go(t, ctx, "scheduler", loop.Run)
//	...
//	stop() // optional: the test's cleanup stops it otherwise
//
// It depends on the standard library alone.
package runtest

import (
	"context"
	"testing"
)

// Go runs run with a child of ctx and returns a stop function that cancels
// it and waits for it to return, reporting a non-nil result as a test
// error naming what. Stop runs at the end of the test too; calling it
// again does nothing. Call stop from the test's goroutine only.
func Go(t testing.TB, ctx context.Context, what string, run func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s Run = %v; want nil after cancel", what, err)
		}
	}
	t.Cleanup(stop)
	return stop
}
