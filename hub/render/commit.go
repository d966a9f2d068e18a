package render

import (
	"slices"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// plan is the new state of one work key, computed without the lock.
type plan struct {
	key    string
	policy agentv1.DeletionPolicy
	// reason is why the clusters in drop lose the work; failedOver are
	// those of them whose graceful eviction just ended (FAILOVER).
	reason     agentv1.DeleteReason
	failedOver []string
	// evicting are the clusters the binding is gracefully leaving.
	evicting map[string]bool
	// exists is false when the template or its binding is gone: every
	// cluster loses the work and the key is forgotten.
	exists bool
	// vouch are the clusters the work belongs to (see refState.vouch).
	vouch map[string]bool
	// set is the new content per cluster; drop the clusters that lose
	// the work. Clusters in neither keep what they have.
	set  map[string]*agentv1.WorkUpsert
	drop []string
	// failed is true when some cluster's render failed: it is retried.
	failed bool
	// unsure is where the key may be held when it did not render (failed,
	// panicked, or inputs that do not decode); nil when it rendered or is
	// positively gone (see reach).
	unsure *reach
}

// commit publishes plans and dropped clusters as one new revision, and
// wakes the Changes callers of the clusters that changed.
func (s *state) commit(plans []*plan, dropped []string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	touched := map[*clusterWorks]bool{}
	for _, name := range dropped {
		s.dropCluster(name)
	}
	if len(dropped) > 0 {
		// A cluster created again in this commit starts after the drop,
		// so that a caller still following the old one gets
		// ErrRevisionGone.
		s.rev++
	}
	s.rev++
	for _, p := range plans {
		s.commitPlan(p, now, touched)
	}
	for cw := range touched {
		cw.trim(now, s.retention, s.maxRemoved)
		close(cw.wake)
		cw.wake = make(chan struct{})
	}
	if !s.readyDone {
		s.readyDone = true
		close(s.ready)
	}
}

func (s *state) commitPlan(p *plan, now time.Time, touched map[*clusterWorks]bool) {
	s.setUnsure(p.key, p.unsure)
	ref := s.refs[p.key]
	if ref == nil {
		if !p.exists {
			return
		}
		ref = &refState{}
		s.refs[p.key] = ref
	}
	ref.policy = p.policy
	ref.evicting = p.evicting
	for c, up := range p.set {
		s.put(c, up, touched)
	}
	for _, c := range p.drop {
		reason := p.reason
		if slices.Contains(p.failedOver, c) {
			reason = agentv1.DeleteReason_DELETE_REASON_FAILOVER
		}
		s.remove(c, p.key, removal{policy: p.policy, reason: reason, rev: s.rev, at: now}, touched)
	}
	ref.placed = ref.placed.updated(p.set, p.drop)
	ref.vouch = newClusterSet(p.vouch)
	if len(ref.vouch) > 0 && slices.Equal(ref.vouch, ref.placed) {
		ref.vouch = ref.placed // one slice: a work is mostly placed where it is vouched for
	}
	if !p.exists && len(ref.placed) == 0 {
		delete(s.refs, p.key)
	}
}

// put gives cluster the work up unless it holds that version already. A
// version already rendered for anyone is shared, not stored again.
func (s *state) put(cluster string, up *agentv1.WorkUpsert, touched map[*clusterWorks]bool) {
	cw := s.cluster(cluster, s.rev-1) // its history starts with this commit
	key := up.GetWorkKey()
	old, had := cw.works[key]
	if had && old.version == up.GetVersion() {
		return
	}
	s.hold(up)
	if had {
		s.release(old.version)
	}
	cw.works[key] = heldWork{version: up.GetVersion(), rev: s.rev}
	delete(cw.removed, key)
	cw.record(s.rev, key)
	touched[cw] = true
}

// remove takes key from cluster and remembers the removal rm.
func (s *state) remove(cluster, key string, rm removal, touched map[*clusterWorks]bool) {
	cw := s.clusters[cluster]
	if cw == nil {
		return
	}
	w, ok := cw.works[key]
	if !ok {
		return
	}
	s.release(w.version)
	delete(cw.works, key)
	cw.removed[key] = rm
	cw.removals = append(cw.removals, logEntry{rev: s.rev, key: key})
	cw.record(s.rev, key)
	touched[cw] = true
}

// dropCluster forgets a deleted cluster: its works, its history (a caller
// following it gets ErrRevisionGone) and its share of the contents.
func (s *state) dropCluster(name string) {
	cw := s.clusters[name]
	if cw == nil {
		return
	}
	for key, w := range cw.works {
		s.release(w.version)
		if ref := s.refs[key]; ref != nil {
			ref.placed = ref.placed.updated(nil, []string{name})
		}
	}
	delete(s.clusters, name)
	close(cw.wake)
}

// placed returns the clusters holding key. Only Run's goroutine calls
// it, without the lock (it is the only writer).
func (s *state) placed(key string) clusterSet {
	if ref := s.refs[key]; ref != nil {
		return ref.placed
	}
	return nil
}

// evicting returns the clusters key was last published as gracefully
// leaving. Only Run's goroutine calls it, without the lock.
func (s *state) evicting(key string) map[string]bool {
	if ref := s.refs[key]; ref != nil {
		return ref.evicting
	}
	return nil
}

// lastPolicy is the deletion policy last published for key.
func (s *state) lastPolicy(key string) agentv1.DeletionPolicy {
	if ref := s.refs[key]; ref != nil {
		return ref.policy
	}
	return agentv1.DeletionPolicy_DELETION_POLICY_DELETE
}
