package aggregate

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"time"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
)

// relistBackoff is how long Run waits before listing again after a session
// failed for another reason than compaction. No jitter: only the leader
// runs the aggregator.
const relistBackoff = 2 * time.Second

// errWatchClosed ends a session whose watch channel closed without error.
var errWatchClosed = errors.New("aggregate: watch closed")

// runState is the state of the goroutine running Run.
type runState struct {
	graceUntil time.Time
	graceOver  bool
	states     map[string]liveness.State // lease state by cluster
	bindings   map[string]*entry         // by binding key
	dirty      map[string]bool           // binding keys to flush
	// pending are the binding keys whose template status waits for a
	// webhook's answer (interpreter.ErrPending): dirty again when one
	// arrives.
	pending map[string]bool
	// superseded: binding key → cluster → its assignment change still
	// awaiting a newer version (ItemsInput.Superseded)
	superseded map[string]map[string]supersession
	// passAt is when the flush pass under way began: a binding's spacing
	// counts from the pass that wrote it, not from when its write
	// returned.
	passAt time.Time

	passes atomic.Uint64 // flush passes done, for tests
	writes atomic.Uint64 // bindings written, for tests
}

// entry is one cached binding.
type entry struct {
	b   *workv1alpha1.ResourceBinding
	enc encoding // of json.Marshal(b)
	rev int64
	// written is when the flush pass that last wrote the binding began
	// (zero: not written since Run started), for spacing (flushSpacing).
	written time.Time
}

// Run writes aggregated statuses until ctx ends, then returns nil. A
// compacted watch lists again; other store failures list again after
// relistBackoff. Its goroutines have exited when it returns.
func (a *Aggregator) Run(ctx context.Context) error {
	a.run.graceUntil = a.cfg.Clock.Now().Add(a.cfg.StartupGrace)
	leaseCh, stop := liveness.Changed(ctx, a.leases)
	defer stop()
	return store.Follow(ctx, a.log, relistBackoff, func(ctx context.Context) error {
		return a.session(ctx, leaseCh)
	})
}

// session lists the bindings, then flushes the dirty ones at most once
// per flush interval, until ctx ends or the watch fails.
func (a *Aggregator) session(ctx context.Context, leaseCh <-chan struct{}) error {
	rev, err := a.load(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	events := a.store.Watch(wctx, store.BindingsPrefix, rev+1, store.DeletesWithoutValue)
	defer func() {
		cancel()
		for range events {
		}
	}()
	flush := time.NewTimer(a.cfg.FlushInterval)
	defer flush.Stop()
	armed := true
	var grace <-chan time.Time
	if !a.run.graceOver {
		grace = a.cfg.Clock.At(a.run.graceUntil)
	}
	for {
		if !armed && len(a.run.dirty) > 0 {
			flush.Reset(a.cfg.FlushInterval)
			armed = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return errWatchClosed
			}
			if ev.Err != nil {
				return ev.Err
			}
			a.applyBinding(ev)
		case <-a.kick:
			for _, k := range a.takePending() {
				a.run.dirty[k] = true
			}
		case <-leaseCh:
			a.refreshStates()
		case <-grace:
			grace = nil
			a.refreshStates()
		case <-flush.C:
			armed = false
			a.flushAll(ctx)
		case <-a.answered():
			for k := range a.run.pending {
				a.run.dirty[k] = true
			}
			clear(a.run.pending)
		}
	}
}

// load lists the bindings into the cache and marks them all dirty.
func (a *Aggregator) load(ctx context.Context) (int64, error) {
	a.run.bindings = make(map[string]*entry)
	a.run.dirty = make(map[string]bool)
	a.run.pending = map[string]bool{}
	rev, err := a.store.ListEach(ctx, store.BindingsPrefix, func(kv store.KV) {
		a.applyBinding(store.Event{Type: store.EventPut, KV: kv})
	})
	if err != nil {
		return 0, err
	}
	a.run.states = nil
	a.refreshStates()
	return rev, nil
}

// applyBinding updates the cache and marks the binding dirty; the echo of
// the aggregator's own write is skipped.
func (a *Aggregator) applyBinding(ev store.Event) {
	key := ev.KV.Key
	if ev.Type == store.EventDelete {
		delete(a.run.bindings, key)
		delete(a.run.dirty, key)
		delete(a.run.superseded, key)
		a.dropBinding(key)
		return
	}
	cur, ok := a.run.bindings[key]
	if ok && cur.rev >= ev.KV.Revision {
		return
	}
	b, err := workv1alpha1.Decode(ev.KV.Value)
	if err != nil {
		a.cfg.Counts.Add("aggregate", guard.KindDecode)
		a.log.Warn("binding not decodable, its status is not aggregated until it is", "key", key, "error", err)
		delete(a.run.bindings, key)
		return
	}
	a.cache(key, b, ev.KV.Revision, ev.KV.Revision)
	a.run.dirty[key] = true
}

// cache replaces the cached binding key with b, stored at revision rev,
// whose assignment changed at revision changed or later (noteAssignments);
// when the last write was is kept.
func (a *Aggregator) cache(key string, b *workv1alpha1.ResourceBinding, rev, changed int64) {
	var written time.Time
	if cur, ok := a.run.bindings[key]; ok {
		a.noteAssignments(key, cur.b, b, changed)
		written = cur.written
	}
	_, enc := encode(b)
	a.keepUnobserved(key, b)
	a.run.bindings[key] = &entry{b: b, enc: enc, rev: rev, written: written}
}

// keepUnobserved drops from the cached binding b the items of the clusters
// whose ack or report is held: the next flush builds those from what is
// held (BuildItems), and only an item for which nothing is held (a store
// restored or a restarted hub, before the agent reports again) is kept as
// written. A binding on 1,000 clusters otherwise kept its 1,000 items
// next to the records they are built from. A record is forgotten only
// when its work is deleted from the cluster (or the cluster removed): an
// item built then is empty and Unknown, as for a cluster not heard from.
func (a *Aggregator) keepUnobserved(key string, b *workv1alpha1.ResourceBinding) {
	items := b.Status.AggregatedStatus
	if len(items) == 0 {
		return
	}
	var kept []configv1alpha1.AggregatedStatusItem
	a.mu.Lock()
	for _, it := range items {
		if a.byBinding[key][it.ClusterName] == nil {
			kept = append(kept, it)
		}
	}
	a.mu.Unlock()
	b.Status.AggregatedStatus = kept
}

// refreshStates reads the lease states; when a cluster's state or the
// start-up grace changed, every binding is marked dirty.
func (a *Aggregator) refreshStates() {
	leases, _ := a.leases.List()
	states := make(map[string]liveness.State, len(leases))
	for _, l := range leases {
		states[l.Cluster] = l.State
	}
	graceOver := !a.cfg.Clock.Now().Before(a.run.graceUntil)
	if a.run.states != nil && maps.Equal(states, a.run.states) && graceOver == a.run.graceOver {
		return
	}
	a.run.states, a.run.graceOver = states, graceOver
	for key := range a.run.bindings {
		a.run.dirty[key] = true
	}
}

// stale reports whether a cluster's statuses are stale: its lease is
// Unknown, or it has none and the start-up grace is over.
func (a *Aggregator) stale(cluster string) bool {
	if st, ok := a.run.states[cluster]; ok {
		return st == liveness.StateUnknown
	}
	return a.run.graceOver
}

// supersession is a target cluster whose assigned replicas changed: the
// version its agent had last acked or reported then ("" for none) and the
// replicas it had before (-1: it was no target).
type supersession struct {
	version  string
	replicas int32
}

// noteAssignments records the target clusters of nb, written at revision
// rev, whose assignment differs from old's, so that their items count as
// Unknown until their agents observe a newer version than they held at
// rev (the renderer sends one: the replicas are part of the work). What
// they held at rev, not now: an agent may answer the new version before
// this goroutine sees the binding write. A change back to the replicas a
// cluster had is forgotten again: no new version may come then. A new
// target for which nothing is held nor written is not recorded: its item
// is Unknown until its agent reports anyway, and any report ends the wait
// (a thousand entries per binding placed on a thousand clusters, for
// nothing).
func (a *Aggregator) noteAssignments(key string, old, nb *workv1alpha1.ResourceBinding, rev int64) {
	before := make(map[string]int32, len(old.Spec.Clusters))
	for _, t := range old.Spec.Clusters {
		before[t.Name] = t.Replicas
	}
	var written map[string]bool // clusters with an item in nb, built when needed
	sup := a.run.superseded[key]
	for _, t := range nb.Spec.Clusters {
		r, targeted := before[t.Name]
		if targeted && r == t.Replicas {
			continue
		}
		if s, waiting := sup[t.Name]; waiting {
			if s.replicas == t.Replicas {
				delete(sup, t.Name)
			}
			continue
		}
		v := a.versionAt(key, t.Name, rev)
		if !targeted && v == "" {
			if written == nil {
				written = itemClusters(nb)
			}
			if !written[t.Name] {
				continue
			}
		}
		if !targeted {
			r = -1
		}
		if sup == nil {
			sup = make(map[string]supersession)
			if a.run.superseded == nil {
				a.run.superseded = make(map[string]map[string]supersession)
			}
			a.run.superseded[key] = sup
		}
		sup[t.Name] = supersession{version: v, replicas: r}
	}
}

// itemClusters is the set of clusters b has an aggregated status item of.
func itemClusters(b *workv1alpha1.ResourceBinding) map[string]bool {
	out := make(map[string]bool, len(b.Status.AggregatedStatus))
	for _, it := range b.Status.AggregatedStatus {
		out[it.ClusterName] = true
	}
	return out
}

// supersededFor returns the binding's pending supersessions for
// BuildItems, forgetting those of clusters that are no target any more or
// whose agents observed a newer version since.
func (a *Aggregator) supersededFor(key string, b *workv1alpha1.ResourceBinding, obs map[string]Observation) map[string]string {
	sup := a.run.superseded[key]
	if len(sup) == 0 {
		return nil
	}
	targets := make(map[string]bool, len(b.Spec.Clusters))
	for _, t := range b.Spec.Clusters {
		targets[t.Name] = true
	}
	out := make(map[string]string, len(sup))
	for c, s := range sup {
		if o, seen := obs[c]; !targets[c] || (seen && o.Latest != s.version) {
			delete(sup, c)
			continue
		}
		out[c] = s.version
	}
	if len(sup) == 0 {
		delete(a.run.superseded, key) // an emptied map keeps its buckets
	}
	return out
}

// deferring is an Interpreter that answers webhook calls in the
// background (interpreter.Deferred), signalling Ready when one arrives.
type deferring interface {
	Ready() <-chan struct{}
}

// answered is signalled when a pending webhook answer arrives; nil (never
// ready) without a deferring Interpreter.
func (a *Aggregator) answered() <-chan struct{} {
	if d, ok := a.interp.(deferring); ok {
		return d.Ready()
	}
	return nil
}
