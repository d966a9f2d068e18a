package leader

import (
	"context"
	"time"
)

// runAlone leads until ctx ends (nil) or lead fails (its error), as the
// only replica (Config.Alone): the fence is open throughout, and lead
// returning early is called again after retryDelay.
func (e *Elector) runAlone(ctx context.Context, lead func(ctx context.Context) error) error {
	e.fence.Open()
	defer e.fence.Release()
	e.leading.Store(true)
	defer e.leading.Store(false)
	for {
		e.terms.Add(1)
		e.log.Info("leading as the only replica", "name", e.cfg.Name)
		err := lead(ctx)
		if ctx.Err() != nil {
			e.log.Info("stopped leading")
			return nil
		}
		if err != nil {
			return err
		}
		e.log.Warn("the leader's work returned; starting it again", "in", retryDelay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retryDelay):
		}
	}
}
