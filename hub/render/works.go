package render

import (
	"context"
	"errors"
	"fmt"
	"slices"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// ErrRevisionGone is Changes' error for a revision older than the
// cluster's remembered history (removals forgotten, or the cluster deleted
// and registered again). The caller starts over from Current.
var ErrRevisionGone = errors.New("render: revision no longer available")

// Current returns the cluster's works, sorted by key, and the revision
// they reflect. It waits for Run's first publication.
func (r *Renderer) Current(ctx context.Context, cluster string) ([]*agentv1.WorkUpsert, int64, error) {
	if err := r.waitReady(ctx); err != nil {
		return nil, 0, err
	}
	s := r.state
	s.mu.Lock()
	defer s.mu.Unlock()
	cw := s.cluster(cluster, s.rev)
	keys := make([]string, 0, len(cw.works))
	for k := range cw.works {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*agentv1.WorkUpsert, len(keys))
	for i, k := range keys {
		out[i] = s.contents[cw.works[k].version].up
	}
	return out, s.rev, nil
}

// Changes returns the cluster's works changed after rev, each key once
// with its latest state (an upsert, or a removal with its deletion
// policy), oldest change first, the revision they bring the cluster to,
// and the channel closed at the cluster's next change after them
// (agentapi.Works).
func (r *Renderer) Changes(ctx context.Context, cluster string, rev int64) ([]syncstate.Change, int64, <-chan struct{}, error) {
	if err := r.waitReady(ctx); err != nil {
		return nil, 0, nil, err
	}
	return r.changesSince(cluster, rev)
}

// changesSince returns the changes after rev and the channel closed at
// the cluster's next change.
func (r *Renderer) changesSince(cluster string, rev int64) ([]syncstate.Change, int64, <-chan struct{}, error) {
	s := r.state
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > s.rev {
		return nil, 0, nil, fmt.Errorf("%w: revision %d is ahead of the renderer's %d", ErrRevisionGone, rev, s.rev)
	}
	cw := s.cluster(cluster, s.rev)
	if rev < cw.floor {
		return nil, 0, nil, fmt.Errorf("%w: cluster %q has history from revision %d, asked from %d", ErrRevisionGone, cluster, cw.floor, rev)
	}
	keys := cw.since(rev)
	if len(keys) == 0 {
		return nil, rev, cw.wake, nil
	}
	out := make([]syncstate.Change, 0, len(keys))
	for _, k := range keys {
		if w, ok := cw.works[k]; ok {
			out = append(out, syncstate.Change{Key: k, Work: s.contents[w.version].up})
		} else if rm, ok := cw.removed[k]; ok {
			out = append(out, syncstate.Change{Key: k, Policy: rm.policy, Reason: rm.reason})
		}
	}
	return out, s.rev, cw.wake, nil
}

// Gone returns removals for the keys the renderer vouches are gone from
// the cluster: removed while it remembers (with the deletion policy and
// reason they had), or works of a binding that exists and no longer places
// them on the cluster (with the binding's policy). Keys whose binding
// still places them on the cluster without a published work (a failed
// render, suspended dispatching, an eviction in progress), and keys that
// did not render (failed or panicked) and may be held by the cluster,
// come back as Keep. Other keys are left out: they are absent from the key set of an
// authoritative SyncDone, and the agent deletes them. While the hub is not
// authoritative (Config.Authority) every key is left out, and SyncDone
// carries no key set (Authoritative).
func (r *Renderer) Gone(ctx context.Context, cluster string, keys []string) ([]syncstate.Change, error) {
	if err := r.waitReady(ctx); err != nil {
		return nil, err
	}
	if ok, reason := r.authoritative(); !ok {
		r.log.Warn("no held work reported gone: the hub is not authoritative", "cluster", cluster, "works", len(keys), "reason", reason)
		return nil, nil
	}
	s := r.state
	s.mu.Lock()
	defer s.mu.Unlock()
	cw := s.clusters[cluster]
	var out []syncstate.Change
	for _, k := range keys {
		if c, ok := s.goneOf(cw, cluster, k); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// goneOf is Gone's answer for one key held by cluster, whose works are
// cw (nil when it has none); ok is false for a key left out. mu held.
func (s *state) goneOf(cw *clusterWorks, cluster, key string) (c syncstate.Change, ok bool) {
	if cw != nil {
		if _, held := cw.works[key]; held {
			// Published since the caller read Current: the cluster is to
			// keep it (its upsert follows), never to delete it.
			return syncstate.Change{Key: key, Keep: true}, true
		}
	}
	if rc := s.unsure[key]; rc != nil && rc.has(cluster) {
		return syncstate.Change{Key: key, Keep: true}, true // it did not render: unknown means keep
	}
	if cw != nil {
		if rm, removed := cw.removed[key]; removed {
			return syncstate.Change{Key: key, Policy: rm.policy, Reason: rm.reason}, true
		}
	}
	ref := s.refs[key]
	switch {
	case ref == nil || ref.vouch == nil:
		return c, false
	case ref.vouch.has(cluster):
		return syncstate.Change{Key: key, Keep: true}, true
	}
	return syncstate.Change{Key: key, Policy: ref.policy, Reason: agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED}, true
}

// Ready is closed once the renderer has rendered what the store held when
// it started; until then Current and Changes wait. The agent service
// reads an agent's Hello only then (agentapi.Readiness).
func (r *Renderer) Ready() <-chan struct{} {
	return r.state.ready
}

func (r *Renderer) waitReady(ctx context.Context) error {
	select {
	case <-r.state.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats describe the published works.
type Stats struct {
	// Revision is the last published revision.
	Revision int64
	// StoreRevision is the store revision up to which every change is
	// published (the renderer's lag behind the store).
	StoreRevision int64
	// Clusters is the number of clusters with published state.
	Clusters int
	// Works is the number of (cluster, work) pairs.
	Works int
	// Contents is the number of distinct rendered works held (shared by
	// every cluster with the same version), ContentBytes their manifests'
	// size.
	Contents     int
	ContentBytes int64
}

// Stats returns the current statistics.
func (r *Renderer) Stats() Stats {
	s := r.state
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Revision: s.rev, StoreRevision: r.applied.Load(), Clusters: len(s.clusters), Contents: len(s.contents)}
	for _, cw := range s.clusters {
		st.Works += len(cw.works)
	}
	for _, c := range s.contents {
		st.ContentBytes += int64(c.bytes)
	}
	return st
}
