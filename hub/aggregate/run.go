package aggregate

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"time"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// runState is the state of the goroutine running Run.
type runState struct {
	graceUntil time.Time
	graceOver  bool
	states     map[string]lease.State // lease state by cluster
	bindings   map[string]*entry      // by binding key
	dirty      map[string]bool        // binding keys to flush
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

// entry is one cached binding, without its aggregated status items: those
// are built from what is held at every flush, and the few kept as written
// (of clusters nothing is held for) are read from the store when a flush
// needs them, never kept here.
type entry struct {
	// b is the binding without items: the view's shared value, or one
	// read from the store; never changed.
	b    *workv1alpha1.ResourceBinding
	rev  int64
	size int // of the stored encoding, for spacing (flushSpacing)
	// enc is the encoding of the binding stored at rev, when known: the
	// aggregator wrote it or read it whole.
	enc   encoding
	known bool
	// keeps says the binding stored at rev has items that a flush keeps
	// as written (keepsItems): the flush reads it whole from the store.
	keeps bool
	// written is when the flush pass that last wrote the binding began
	// (zero: not written since Run started), for spacing (flushSpacing).
	written time.Time
}

// Run writes aggregated statuses until ctx ends, then returns nil. It
// follows the bindings in the replica's view (Config.View), whose list,
// watch and relist policy are the only ones: a full batch of the view
// (its first list, or a new list after a store failure) loads every
// binding again.
func (a *Aggregator) Run(ctx context.Context) error {
	if a.cfg.View == nil {
		return errors.New("aggregate: Run needs Config.View")
	}
	a.run.graceUntil = a.cfg.Clock.Now().Add(a.cfg.StartupGrace)
	leaseCh, stop := liveness.Changed(ctx, a.leases)
	defer stop()
	sub := a.cfg.View.Subscribe(store.BindingsPrefix)
	defer sub.Close()
	a.run.bindings, a.run.dirty, a.run.pending = map[string]*entry{}, map[string]bool{}, map[string]bool{}
	flush := time.NewTimer(a.cfg.FlushInterval)
	defer flush.Stop()
	armed := true
	grace := a.cfg.Clock.At(a.run.graceUntil)
	for {
		if !armed && len(a.run.dirty) > 0 {
			flush.Reset(a.cfg.FlushInterval)
			armed = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
			a.applyBatch(sub.Take())
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

// applyBatch applies a batch of the view's bindings: a full one replaces
// the cache and marks every binding dirty.
func (a *Aggregator) applyBatch(b view.Batch) {
	if b.Full {
		a.run.bindings, a.run.dirty, a.run.pending = map[string]*entry{}, map[string]bool{}, map[string]bool{}
	}
	for _, c := range b.Changes {
		a.applyBinding(c)
	}
	if b.Full {
		a.run.states = nil
		a.refreshStates()
	}
}

// applyBinding updates the cache and marks the binding dirty; the echo of
// the aggregator's own write (or of one it read) only makes the entry
// share the view's value.
func (a *Aggregator) applyBinding(c view.Change) {
	key := c.Key
	if c.Object == nil {
		delete(a.run.bindings, key)
		delete(a.run.dirty, key)
		delete(a.run.superseded, key)
		a.dropBinding(key)
		return
	}
	o := c.Object
	cur, ok := a.run.bindings[key]
	b, decoded := o.Value.(*workv1alpha1.ResourceBinding)
	if ok && cur.rev >= o.Revision {
		if cur.rev == o.Revision && o.Err == nil && decoded {
			cur.b = b // the same binding, shared with the view
		}
		return
	}
	if o.Err != nil || !decoded || b == nil {
		a.cfg.Counts.Add("aggregate", guard.KindDecode)
		a.log.Warn("binding not decodable, its status is not aggregated until it is", "key", key, "error", o.Err)
		delete(a.run.bindings, key)
		return
	}
	e := &entry{b: b, rev: o.Revision, size: o.Size}
	if ok {
		a.noteAssignments(key, cur.b, b, o.Revision)
		e.written = cur.written
	}
	a.run.bindings[key] = e
	a.run.dirty[key] = true
}

// cache replaces the cached binding key with full, read whole from the
// store at revision rev (size bytes): its encoding is known and whether a
// flush keeps some of its items. A newer revision than the cached one
// changed its assignment after the cached revision (noteAssignments).
func (a *Aggregator) cache(key string, full *workv1alpha1.ResourceBinding, rev int64, size int) {
	_, enc := encode(full)
	e := &entry{b: withoutItems(full), rev: rev, size: size, enc: enc, known: true, keeps: a.keepsItems(key, full)}
	if cur, ok := a.run.bindings[key]; ok {
		e.written = cur.written
		switch {
		case cur.rev < rev:
			a.noteAssignments(key, cur.b, full, cur.rev+1)
		case cur.rev == rev:
			e.b = cur.b // the same binding, shared with the view
		}
	}
	a.run.bindings[key] = e
}

// withoutItems is b without its aggregated status items (a shallow copy).
func withoutItems(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	out := *b
	out.Status.AggregatedStatus = nil
	return &out
}

// keepsItems reports whether b has an item that the next flush keeps as
// written: of a cluster nothing is held for (a store restored or a
// restarted hub, before the agent reports again), other than the empty
// Unknown item BuildItems makes of such a cluster anyway. A record is
// forgotten only when its work is deleted from the cluster (or the
// cluster removed): an item built then is empty and Unknown, as for a
// cluster not heard from.
func (a *Aggregator) keepsItems(key string, b *workv1alpha1.ResourceBinding) bool {
	if len(b.Status.AggregatedStatus) == 0 {
		return false
	}
	stale := make(map[string]bool)
	for _, c := range fold.StaleClusters(b) {
		stale[c] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, it := range b.Status.AggregatedStatus {
		empty := configv1alpha1.AggregatedStatusItem{ClusterName: it.ClusterName, Health: configv1alpha1.ResourceUnknown}
		if a.byBinding[key][it.ClusterName] == nil && (it != empty || stale[it.ClusterName]) {
			return true
		}
	}
	return false
}

// refreshStates reads the lease states; when a cluster's state or the
// start-up grace changed, every binding is marked dirty.
func (a *Aggregator) refreshStates() {
	leases, _ := a.leases.List()
	states := make(map[string]lease.State, len(leases))
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
		return st == lease.StateUnknown
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
				written = writtenClusters(old, nb)
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

// writtenClusters is the set of clusters nb has an aggregated status item
// of; for nb as the view holds it, without items, those old's works were
// in (the items the aggregator wrote for it).
func writtenClusters(old, nb *workv1alpha1.ResourceBinding) map[string]bool {
	out := make(map[string]bool, len(nb.Status.AggregatedStatus))
	for _, it := range nb.Status.AggregatedStatus {
		out[it.ClusterName] = true
	}
	if len(out) == 0 {
		for _, c := range workClusters(old) {
			out[c] = true
		}
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
