package hub

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/guard"
)

// TestGroupRestartsPanickingTask: a task that panics is started again and
// the group's other tasks go on; the panic is counted and stops nothing.
func TestGroupRestartsPanickingTask(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counts := guard.NewCounts()
	g := newGroup(ctx, hclog.NewNullLogger(), counts)
	var starts, ticks atomic.Int32
	g.run("flaky", func(ctx context.Context) error {
		if starts.Add(1) == 1 {
			panic("bad data")
		}
		<-ctx.Done()
		return nil
	})
	g.run("steady", func(ctx context.Context) error {
		for ctx.Err() == nil {
			ticks.Add(1)
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	deadline := time.Now().Add(10 * time.Second)
	for starts.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the panicking task was started %d times; want it started again", starts.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := ticks.Load()
	for ticks.Load() == before {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := g.wait(); err != nil {
		t.Errorf("wait = %v; want nil", err)
	}
	if got := counts.Get("task flaky", guard.KindPanic); got != 1 {
		t.Errorf("panics counted = %d; want 1", got)
	}
}
