package hub

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// group runs the hub's long-lived tasks, errgroup-style: the first task to
// fail cancels the context of all of them, and wait returns only once every
// task has returned. Controllers retry their own transient errors (store
// watches, relists), so an error reaching the group is fatal for the process.
type group struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	logger hclog.Logger
	wg     sync.WaitGroup

	mu  sync.Mutex // guards err
	err error      // the first task error
}

// newGroup returns a group whose tasks run under a child of ctx.
func newGroup(ctx context.Context, logger hclog.Logger) *group {
	ctx, cancel := context.WithCancelCause(ctx)
	return &group{ctx: ctx, cancel: cancel, logger: logger}
}

// run starts the task name. A task that returns nil before the group is
// cancelled has simply finished; one that returns an error stops the hub.
func (g *group) run(name string, task func(ctx context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := task(g.ctx)
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
