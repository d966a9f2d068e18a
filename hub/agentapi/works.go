package agentapi

import (
	"context"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// Works is where the service reads a cluster's works: the renderer
// implements it. A work is its wire form, a WorkUpsert, so that one rendered
// copy can be shared by every cluster that gets identical content and by
// every stream; the service never modifies one.
type Works interface {
	// Current returns the cluster's works now and the revision they reflect,
	// from which Changes follows.
	Current(ctx context.Context, cluster string) (works []*agentv1.WorkUpsert, rev int64, err error)
	// Changes returns the changes of the cluster's works after rev, oldest
	// first, the revision they bring the cluster to, and the channel
	// closed at its next change after them (the stream's send loop waits
	// on it with its other channels: no goroutine per stream blocks in
	// Changes). A revision that is no longer available is an error; the
	// stream then ends and the agent's reconnect resynchronizes.
	Changes(ctx context.Context, cluster string, rev int64) (changes []WorkChange, next int64, wake <-chan struct{}, err error)
	// Gone returns, of keys (works the agent holds that Current did not
	// return), the removals (WorkChange.Work nil) for those the hub
	// positively knows are gone from the cluster, with their deletion
	// policy and reason, and WorkChange.Keep for those the cluster is to
	// keep though Current has no content for them (not renderable now).
	// A key left out is absent from the authoritative SyncDone's key set,
	// and the agent deletes it.
	Gone(ctx context.Context, cluster string, keys []string) ([]WorkChange, error)
}

// Readiness is what a Works may also implement when it cannot answer at
// once (the renderer of a restarted hub rebuilds what it renders first):
// Ready is closed once it can. A stream reads the agent's Hello only
// then, so that a fleet reconnecting to a restarted hub does not hold
// every agent's Hello decoded while it waits (a thousand agents holding a
// thousand works each: some 450 MB); unread, a Hello waits in the
// transport, within its stream's flow-control window.
type Readiness interface {
	Ready() <-chan struct{}
}

// WorkChange is one change to a cluster's works: Work set to create or
// replace a work, nil to remove it with Policy.
type WorkChange = syncstate.Change
