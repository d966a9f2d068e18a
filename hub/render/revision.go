package render

import (
	"context"
	"time"
)

// catchUpPoll is how often WaitApplied looks at the applied revision.
const catchUpPoll = 20 * time.Millisecond

// StoreRevision returns the store revision whose changes are all
// published: what Current returns after this call reflects at least it.
// The agent service sends it in Welcome (agentapi.Lineage).
func (r *Renderer) StoreRevision() int64 { return r.applied.Load() }

// WaitApplied waits until the renderer has published every store change
// up to rev, and reports whether it has; false when ctx ends first. A
// replica that lags its store serves no agent that has seen newer
// (agentapi waits here before computing its initial difference).
func (r *Renderer) WaitApplied(ctx context.Context, rev int64) bool {
	if r.applied.Load() >= rev {
		return true
	}
	t := time.NewTicker(catchUpPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return r.applied.Load() >= rev
		case <-t.C:
			if r.applied.Load() >= rev {
				return true
			}
		}
	}
}
