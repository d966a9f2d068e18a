package scheduler

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// load replaces the cache with a full batch of the view (clusters first)
// and marks every binding dirty.
func (l *Loop) load(ctx context.Context, b view.Batch) error {
	if err := l.loadFloor(ctx); err != nil {
		return err
	}
	l.stored = make(map[string]clusterv1alpha1.Cluster)
	l.storedGen, l.cache, l.order = make(map[string]uint64), memberCache{}, nil
	l.storedList = nil
	l.bindings = make(map[string]*entry)
	l.works, l.full = make(map[string]int), make(map[string]bool)
	l.dirty = make(map[string]bool)
	l.rechecks = make(map[string]time.Time)
	for _, c := range b.Changes {
		if strings.HasPrefix(c.Key, store.ClustersPrefix) {
			l.applyCluster(c)
		}
	}
	for _, c := range b.Changes {
		if strings.HasPrefix(c.Key, store.BindingsPrefix) {
			l.applyBinding(c)
		}
	}
	l.members = nil
	l.refreshMembers()
	l.taken = b.Revision
	l.log.Debug("loaded", "clusters", len(l.stored), "bindings", len(l.bindings), "revision", b.Revision)
	return nil
}

// applyBinding updates the cache and marks the binding dirty, unless only
// its aggregated status changed and Step does not read it (healthOnly).
// The echo of the loop's own write (a revision it already holds) is
// skipped. The view's binding is cached as it is, shared: Step copies
// what it changes (place.CloneBinding).
func (l *Loop) applyBinding(c view.Change) {
	key := c.Key
	if c.Object == nil {
		l.setEntry(key, nil)
		delete(l.rechecks, key)
		delete(l.unhealthy, key)
		delete(l.dirty, key)
		return
	}
	if cur, ok := l.bindings[key]; ok && cur.rev >= c.Object.Revision {
		return
	}
	if c.Object.Err != nil {
		l.log.Warn("binding not decodable, skipped", "key", key, "error", c.Object.Err)
		l.setEntry(key, nil)
		return
	}
	b := c.Object.Value.(*workv1alpha1.ResourceBinding)
	old := l.bindings[key]
	l.setEntry(key, &entry{b: b, rev: c.Object.Revision})
	if old != nil && healthOnly(old.b, b) {
		return
	}
	l.dirty[key] = true
}

// healthOnly reports whether b differs from old only in what
// hub/aggregate writes (placement.AggregateOnly; several writes per
// binding while its replicas get ready) and Step reads none of it: the
// binding has no graceful eviction task (AssessTasks), no application
// failover (ApplicationEvictions) and no rebalance in progress
// (place.Rebalancing). Such a write decides nothing new.
func healthOnly(old, b *workv1alpha1.ResourceBinding) bool {
	return !readsHealth(old) && !readsHealth(b) && placement.AggregateOnly(old, b)
}

// readsHealth reports whether Step reads b's aggregated status.
func readsHealth(b *workv1alpha1.ResourceBinding) bool {
	return len(b.Spec.GracefulEvictionTasks) > 0 || place.ApplicationFailover(b) != nil || place.Rebalancing(b)
}

// applyCluster updates the stored clusters.
func (l *Loop) applyCluster(ch view.Change) {
	name := strings.TrimPrefix(ch.Key, store.ClustersPrefix)
	if ch.Object == nil {
		l.dropCluster(name)
		return
	}
	if ch.Object.Err != nil {
		l.log.Warn("cluster not decodable, skipped", "cluster", name, "error", ch.Object.Err)
		l.dropCluster(name)
		return
	}
	c := *ch.Object.Value.(*clusterv1alpha1.Cluster) // a copy: the view's is shared
	c.Name = name
	if _, ok := l.stored[name]; !ok {
		l.order = nil
	}
	l.stored[name], l.storedList = c, nil
	l.gen++
	l.storedGen[name] = l.gen
}

// dropCluster forgets a stored cluster.
func (l *Loop) dropCluster(name string) {
	if _, ok := l.stored[name]; ok {
		l.order, l.storedList = nil, nil
	}
	delete(l.stored, name)
	delete(l.storedGen, name)
}

// storedClusters are the stored clusters sorted by name (the order
// members are in): l.storedList, listed again only when a stored cluster
// changed, from l.order, sorted again only when a cluster came or went.
// Callers must not modify it.
func (l *Loop) storedClusters() []clusterv1alpha1.Cluster {
	if l.storedList != nil {
		return l.storedList
	}
	if l.order == nil {
		l.order = make([]string, 0, len(l.stored))
		for name := range l.stored {
			l.order = append(l.order, name)
		}
		slices.Sort(l.order)
	}
	l.storedList = make([]clusterv1alpha1.Cluster, 0, len(l.order))
	for _, name := range l.order {
		l.storedList = append(l.storedList, l.stored[name])
	}
	return l.storedList
}

// refreshMembers rebuilds the cluster snapshot and marks dirty the
// bindings its changes concern (concerns): for a change of anything but
// capacity, the bindings that name the changed clusters or may be placed
// on them; for a change of capacity alone (the resource summaries the
// agents' heartbeats carry change constantly while pods start), only
// those among them whose decision can depend on capacity
// (placement.CapacityBound). The first snapshot after load marks
// nothing: load marked every binding dirty.
func (l *Loop) refreshMembers() {
	stored := l.storedClusters()
	leases, rev := l.leases.List()
	l.leaseRev = rev
	now := l.clock.Now()
	unreachable, total := Census(stored, leases, now, l.graceUntil)
	l.setDisruption(FullDisruption(unreachable, total), unreachable, total, now)
	lv := place.Liveness{GraceUntil: l.graceUntil, Disrupted: l.disrupted.Load(), NoExecuteFloor: l.noExecuteFloor}
	members, rebuilt := l.cache.build(stored, l.storedGen, leases, now, lv)
	l.refreshes.Add(1)
	if l.members == nil {
		l.members, l.index = members, place.IndexMembers(members)
		return
	}
	shape, capacity := membersDiff(l.members, members, rebuilt)
	if len(shape) == 0 && len(capacity) == 0 {
		return
	}
	l.members, l.index = members, place.IndexMembers(members)
	l.markConcerned(shape, capacity)
}

// markConcerned marks dirty the bindings the changes concern: any change
// of shape, or a change of capacity when the binding's decision depends
// on capacity.
func (l *Loop) markConcerned(shape, capacity changes) {
	exists := l.index.Exists
	for key, e := range l.bindings {
		if l.dirty[key] {
			continue
		}
		in, p := e.interest(), e.b.Spec.Placement
		if concerns(in, p, shape) || (len(capacity) > 0 && concerns(in, p, capacity) && placement.CapacityBound(e.b, exists)) {
			l.dirty[key] = true
		}
	}
}

// dueRechecks marks the bindings whose recheck time has come.
func (l *Loop) dueRechecks() {
	now := l.clock.Now()
	for key, at := range l.rechecks {
		if !at.After(now) {
			delete(l.rechecks, key)
			l.dirty[key] = true
		}
	}
}

// process decides every dirty binding, in key order, and writes the
// changed ones (writeAll), then arms the timer for the earliest recheck
// (or the end of the start-up grace). A round that frees room on a full
// cluster marks every binding dirty again (setEntry), so it runs again, at
// most maxRounds times.
func (l *Loop) process(ctx context.Context) {
	l.saveFloor(ctx)
	for round := 0; len(l.dirty) > 0 && round < maxRounds; round++ {
		keys := make([]string, 0, len(l.dirty))
		for key := range l.dirty {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		var writes []write
		for _, key := range keys {
			delete(l.dirty, key)
			if !l.withItems(ctx, key) {
				continue
			}
			if w, ok := l.decide(key); ok {
				writes = append(writes, w)
			}
		}
		l.writeAll(ctx, writes)
	}
	l.arm()
	l.armed.Store(0)
	if !l.armedAt.IsZero() {
		l.armed.Store(l.armedAt.UnixNano())
	}
	l.settled.Store(l.leaseRev)
	l.viewSettled.Store(l.taken)
	l.passes.Add(1)
}

// arm points l.timer at the earliest recheck, re-arming only when that
// time changed.
func (l *Loop) arm() {
	var next time.Time
	if now := l.clock.Now(); now.Before(l.graceUntil) {
		next = l.graceUntil
	}
	for _, at := range l.rechecks {
		next = place.Earliest(next, at)
	}
	if next.Equal(l.armedAt) {
		return
	}
	l.armedAt, l.timer = next, nil
	if !next.IsZero() {
		l.timer = l.clock.At(next)
	}
}
