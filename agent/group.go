package agent

import (
	"context"
	"sync"
)

// group runs the agent's parts: the first to return cancels the context
// of all of them (one part ending ends the agent), and wait returns once
// every part has returned.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex // guards errs
	errs []error
}

// newGroup returns a group whose parts run under a child of ctx.
func newGroup(ctx context.Context) *group {
	ctx, cancel := context.WithCancel(ctx)
	return &group{ctx: ctx, cancel: cancel}
}

// run starts part.
func (g *group) run(part func(context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := part(g.ctx)
		g.cancel()
		g.mu.Lock()
		defer g.mu.Unlock()
		g.errs = append(g.errs, err)
	}()
}

// wait waits for every part and returns their errors but context.Canceled
// (parts ending because the agent stops are not errors).
func (g *group) wait() error {
	g.wg.Wait()
	g.cancel()
	return filterCanceled(g.errs)
}
