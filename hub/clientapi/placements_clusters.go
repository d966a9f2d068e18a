package clientapi

import (
	"context"
	"strings"
	"sync"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// clusterCache is the registered clusters as last read, shared by every
// WatchPlacements stream of a backend to recompute rejections: a stream
// sends many placements in a row, and one etcd read per message would
// halve its pace. A stream takes the cached list when it was read at or
// after the revision the stream needs (clusterView) and reads it again
// otherwise, one reader at a time, so that the streams waiting meanwhile
// take what it read: the list is read about once per change of a cluster
// record, however many streams there are. Safe for concurrent use.
type clusterCache struct {
	st *store.Store
	// turn is held (a value sent on it) by the one caller reading the
	// store.
	turn chan struct{}

	mu sync.Mutex // guards the fields below
	// cs is the list read at revision rev (0: none read yet). Streams
	// share it: it is never modified, only replaced.
	cs  []clusterv1alpha1.Cluster
	rev int64
}

func newClusterCache(st *store.Store) *clusterCache {
	return &clusterCache{st: st, turn: make(chan struct{}, 1)}
}

// at returns the clusters as read at revision need or later.
func (c *clusterCache) at(ctx context.Context, need int64) ([]clusterv1alpha1.Cluster, error) {
	if cs, ok := c.cached(need); ok {
		return cs, nil
	}
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.turn }()
	if cs, ok := c.cached(need); ok {
		return cs, nil // read by the caller that held the turn before
	}
	cs, rev, err := readClusters(ctx, c.st)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > c.rev {
		c.cs, c.rev = cs, rev
	}
	return cs, nil
}

// cached is the cached list, if it was read at revision need or later.
func (c *clusterCache) cached(need int64) ([]clusterv1alpha1.Cluster, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cs, c.rev > 0 && c.rev >= need
}

// clusterView is one WatchPlacements stream's use of the clusterCache: it
// takes the clusters as read at or after the revision of the current
// placements it sends (or the revision it resumes from) and of every
// change of a cluster record its watch has read, so that a rejection is
// never computed against clusters older than the placement it is sent
// with, nor older than a cluster change the stream has seen.
type clusterView struct {
	cache *clusterCache
	// need is the revision the clusters must be read at or after; raised
	// by the stream and by its watch's filler.
	need store.Watermark
}

func (b *backend) newClusterView(from int64) *clusterView {
	v := &clusterView{cache: b.clusters}
	v.observe(from)
	return v
}

// observe raises the revision the clusters must be read at to rev.
func (v *clusterView) observe(rev int64) { v.need.Raise(rev) }

// clusters is v's clusterSource.
func (v *clusterView) clusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error) {
	return v.cache.at(ctx, v.need.Load())
}

// noting is keep that also observes the changes of cluster records, which
// a WatchPlacements watch reads (its key range spans them) and drops.
func (v *clusterView) noting(keep func(store.Event) bool) func(store.Event) bool {
	return func(ev store.Event) bool {
		if strings.HasPrefix(ev.KV.Key, store.ClustersPrefix) {
			v.observe(ev.KV.Revision)
		}
		return keep(ev)
	}
}
