package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/guard"
)

// Restart delays of a task that panicked: doubling from restartMin to
// restartMax, so that a task that panics at once on every start does not
// spin.
const (
	restartMin = time.Second
	restartMax = 30 * time.Second
)

// group runs the hub's long-lived tasks, errgroup-style: the first task to
// fail cancels the context of all of them, and wait returns only once every
// task has returned. Controllers retry their own transient errors (store
// watches, relists), so an error reaching the group is fatal for the
// process. A panic is not: controllers skip the key that panics
// (hub/guard), and a panic that escapes a task anyway is logged, counted
// and the task started again after a delay, the others going on.
type group struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	logger hclog.Logger
	counts *guard.Counts // nil counts nothing
	wg     sync.WaitGroup

	mu  sync.Mutex // guards err
	err error      // the first task error
}

// newGroup returns a group whose tasks run under a child of ctx.
func newGroup(ctx context.Context, logger hclog.Logger, counts *guard.Counts) *group {
	ctx, cancel := context.WithCancelCause(ctx)
	return &group{ctx: ctx, cancel: cancel, logger: logger, counts: counts}
}

// run starts the task name. A task that returns nil before the group is
// cancelled has simply finished; one that returns an error stops the hub.
func (g *group) run(name string, task func(ctx context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := g.guarded(name, task)
		switch {
		case err != nil && g.ctx.Err() == nil:
			g.fail(fmt.Errorf("%s: %w", name, err))
		case err != nil:
			g.logger.Debug("task ended after stop", "task", name, "error", err)
		default:
			g.logger.Debug("task ended", "task", name)
		}
	}()
}

// guarded runs task until it returns, starting it again after a panic.
func (g *group) guarded(name string, task func(ctx context.Context) error) error {
	delay := restartMin
	for {
		err := guard.Do(g.logger, g.counts, "task "+name, name, func() error { return task(g.ctx) })
		if !errors.Is(err, guard.ErrPanicked) {
			return err
		}
		g.logger.Warn("task panicked; starting it again", "task", name, "in", delay)
		timer := time.NewTimer(delay)
		select {
		case <-g.ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		delay = min(2*delay, restartMax)
	}
}

// fail records err as the group's error, if it is the first, and cancels.
func (g *group) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err // Run returns it; main logs it
	}
	g.cancel(err)
}

// wait blocks until every task has returned and returns the first error.
func (g *group) wait() error {
	g.wg.Wait()
	g.cancel(nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
