package aggregate

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unique"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/protocol"
)

// DefaultFlushInterval is how long reports for one binding are coalesced
// before its status is written: at most one write per binding per
// interval.
const DefaultFlushInterval = 200 * time.Millisecond

// maxWorkKeyBytes bounds a work key relayed: a key the renderer makes
// (group, kind, namespace and name) is far shorter.
const maxWorkKeyBytes = 1024

// maxOldVersions is how many superseded versions per work are remembered
// to discard late acks and reports of them.
const maxOldVersions = 4

// Interpreter is what the aggregator needs from internal/interpreter.
type Interpreter interface {
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// Leases is what the aggregator needs from hub/liveness.Leases.
type Leases interface {
	List() ([]lease.Lease, uint64)
	Wait(ctx context.Context, after uint64) (uint64, error)
	Duration() time.Duration
}

// Config configures an Aggregator.
type Config struct {
	// Clock is the time source, the same as the leases'; nil: the wall
	// clock. Coalescing always uses the wall clock.
	Clock liveness.Clock
	// FlushInterval coalesces writes; zero: DefaultFlushInterval.
	FlushInterval time.Duration
	// StartupGrace is how long after Run starts a cluster without a lease
	// is not yet stale; zero: the lease duration plus
	// protocol.MaxReconnectDelay, the longest an agent waits before it
	// reconnects to a restarted hub.
	StartupGrace time.Duration
	// BindingOf maps a work key to the template (and so binding) it was
	// rendered from; nil: ParseWorkKey. The renderer owns the key format.
	BindingOf func(workKey string) (store.ObjectRef, bool)
	// Counts tallies refused reports and recovered panics; nil counts
	// nothing.
	Counts *guard.Counts
	// Relay is the store agents' acks and reports are relayed through by
	// Relay, unfenced: they are agents' data, written by whichever replica
	// holds the stream. Nil: the store given to New.
	Relay *store.Store
	// Replica names this replica in the relayed records, for operators.
	Replica string
	// MaxQueued bounds the works whose updates wait to be relayed; zero:
	// DefaultMaxQueued.
	MaxQueued int
	// MaxQueuedBytes bounds the protobuf bytes waiting to be relayed;
	// zero: DefaultMaxQueuedBytes.
	MaxQueuedBytes int
	// ClusterBudget bounds what one cluster's acks and reports make this
	// replica write (budget.go); zero fields: the defaults.
	ClusterBudget ClusterBudget
	// Local says this hub is the only replica (its etcd is embedded):
	// acks and reports are held in memory as they arrive and never
	// relayed, and Relay only deletes the records a relaying hub left.
	Local bool
	// View is the replica's view of the store (hub/view), holding the
	// bindings and templates: Run follows the bindings in it and reads the
	// templates from it. Required by Run only.
	View *view.View
	// Seen is the highest store revision this replica's components have
	// read (store.Store.Seen); an update is stamped with it when it
	// arrives, to tell which binding write it may answer. Nil: Relay's
	// Seen.
	Seen func() int64
}

// Aggregator implements agentapi.Statuses and writes the aggregated
// statuses to bindings while Run runs.
type Aggregator struct {
	store  *store.Store
	relay  *store.Store // unfenced: Config.Relay
	interp Interpreter
	leases Leases
	cfg    Config
	log    hclog.Logger
	kick   chan struct{} // wakes Run after a record changed; buffered, 1
	// relayKick wakes Relay's writer after an update was queued; buffered, 1.
	relayKick chan struct{}

	mu        sync.Mutex                    // guards the fields below
	records   map[string]map[string]*record // cluster → work key → what its agent reported, as relayed
	byBinding map[string]map[string]*record // binding key → cluster → record
	pending   map[string]bool               // binding keys touched since Run looked
	queue     relayQueue                    // updates received here, not yet relayed
	// maxOrd is the highest receipt order (update.ord) held of each
	// cluster, whichever replica gave it: the next update received here is
	// ordered after it (nextOrdLocked).
	maxOrd map[string]int64
	// spends is each cluster's write budget (ClusterBudget), while it is
	// spent or has updates queued.
	spends   map[string]*spend
	localRev int64 // Config.Local: the revision of the last update held

	strs interner // strings every cluster's records repeat

	run runState // owned by the goroutine running Run
	// now is the wall clock of coalescing (flush spacing); tests replace
	// it before Run starts.
	now func() time.Time
}

var _ agentapi.Statuses = (*Aggregator)(nil)

// workRef names one work in one cluster.
type workRef struct{ cluster, key string }

// record is what the hub holds for one work in one cluster: the stored
// record at store.ReportKey(cluster, key) as of revision rev.
type record struct {
	of  unique.Handle[workOf]
	h   held
	rev int64
}

// workOf names the work a record is of: its binding's key and its work
// key. Every cluster's record of the work shares it (unique.Make): 8
// bytes a record instead of 32 (a million records in make load-million).
type workOf struct{ binding, key string }

// binding is the key of the binding r's work is of.
func (r *record) binding() string { return r.of.Value().binding }

// key is r's work key.
func (r *record) key() string { return r.of.Value().key }

// New returns an aggregator over st; Relay must be running for acks and
// reports to be held, and Run for statuses to be written.
func New(st *store.Store, interp Interpreter, leases Leases, cfg Config, logger hclog.Logger) *Aggregator {
	if cfg.Clock == nil {
		cfg.Clock = liveness.RealClock{}
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.StartupGrace <= 0 {
		cfg.StartupGrace = leases.Duration() + protocol.MaxReconnectDelay
	}
	if cfg.BindingOf == nil {
		cfg.BindingOf = ParseWorkKey
	}
	if cfg.Relay == nil {
		cfg.Relay = st
	}
	if cfg.Seen == nil {
		cfg.Seen = cfg.Relay.Seen
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = DefaultMaxQueued
	}
	if cfg.MaxQueuedBytes <= 0 {
		cfg.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	cfg.ClusterBudget = cfg.ClusterBudget.withDefaults()
	return &Aggregator{
		store: st, relay: cfg.Relay, interp: interp, leases: leases, cfg: cfg, log: logger.Named("aggregate"),
		kick:      make(chan struct{}, 1),
		relayKick: make(chan struct{}, 1),
		records:   make(map[string]map[string]*record),
		byBinding: make(map[string]map[string]*record),
		pending:   make(map[string]bool),
		queue:     relayQueue{deltas: make(map[workRef]*delta)},
		maxOrd:    make(map[string]int64),
		spends:    make(map[string]*spend),
		now:       time.Now,
	}
}

// ParseWorkKey is the default work key format: the binding key without
// its prefix, "<group>/<Kind>/<namespace|_>/<name>" (group "core" for the
// legacy group), as in the store's layout.
func ParseWorkKey(key string) (store.ObjectRef, bool) {
	return store.ParseObjectSuffix(key)
}

// Ack implements agentapi.Statuses: the ack is queued for Relay (an ack
// of a deletion forgets the work). It never blocks on I/O; it fails
// (ErrQueueFull) only when the relay queue is full.
func (a *Aggregator) Ack(ctx context.Context, cluster string, ack *agentv1.Ack) error {
	key := ack.GetWorkKey()
	if _, ok := a.bindingOf(cluster, key); !ok {
		return nil // no record can exist for it either
	}
	if ack.GetResult() == agentv1.ApplyResult_APPLY_RESULT_DELETED {
		return a.enqueue(cluster, key, update{gone: true})
	}
	t := trimAck(ack, &a.strs)
	if n := proto.Size(t); n > maxRelayedBytes {
		a.cfg.Counts.Add("aggregate", guard.KindRefused)
		a.log.Warn("ack too large to relay, dropped", "cluster", cluster, "work", key, "bytes", n, "limit", maxRelayedBytes)
		return nil
	}
	return a.enqueue(cluster, key, update{ack: t})
}

// Report implements agentapi.Statuses: the report is queued for Relay. A
// report that fails agentapi.ValidateStatusReport, or whose template
// manifest is larger than relayed records may be, is refused (the error
// wraps agentapi.ErrInvalidReport), counted and not recorded, whoever
// calls. It never blocks on I/O; it fails (ErrQueueFull) only when the
// relay queue is full.
func (a *Aggregator) Report(ctx context.Context, cluster string, report *agentv1.StatusReport) error {
	if err := agentapi.ValidateStatusReport(report); err != nil {
		a.cfg.Counts.Add("aggregate", guard.KindRefused)
		return fmt.Errorf("cluster %q: %w", cluster, err)
	}
	ref, ok := a.bindingOf(cluster, report.GetWorkKey())
	if !ok {
		return nil
	}
	t := trimReport(report, ref, &a.strs)
	if n := proto.Size(t); n > maxRelayedBytes {
		a.cfg.Counts.Add("aggregate", guard.KindRefused)
		return fmt.Errorf("cluster %q: %w: work %q: %d bytes to relay, more than %d", cluster, agentapi.ErrInvalidReport, report.GetWorkKey(), n, maxRelayedBytes)
	}
	return a.enqueue(cluster, report.GetWorkKey(), update{report: t})
}

// bindingOf maps a work key to its template; a key it cannot map (or too
// long to be a key the renderer made) is logged and ignored.
func (a *Aggregator) bindingOf(cluster, key string) (store.ObjectRef, bool) {
	ref, ok := a.cfg.BindingOf(key)
	if !ok || len(key) > maxWorkKeyBytes {
		a.log.Debug("status of a work no binding is known for, ignored", "cluster", cluster, "work", key)
		return store.ObjectRef{}, false
	}
	return ref, true
}

// Digests implements agentapi.Statuses: the digest of the last report
// relayed per work, whichever replica relayed it, and so across hub
// restarts. A report still queued here is not counted yet.
func (a *Aggregator) Digests(ctx context.Context, cluster string) (map[string]syncstate.Digest, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]syncstate.Digest)
	for key, r := range a.records[cluster] {
		if rep := r.h.content().report; rep.ok {
			out[key] = syncstate.Digest{Version: rep.version, Digest: rep.digest}
		}
	}
	return out, nil
}

// hold records the stored record of a work at revision rev, unless what
// is held is as new (the echo of this replica's own write, or an event
// older than a list).
func (a *Aggregator) hold(cluster, key string, h held, rev int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.holdLocked(cluster, key, h, rev)
}

// holdLocked is hold with a.mu held.
func (a *Aggregator) holdLocked(cluster, key string, h held, rev int64) {
	r := a.records[cluster][key]
	if r != nil && r.rev >= rev {
		return
	}
	if r == nil {
		ref, ok := a.cfg.BindingOf(key)
		if !ok {
			return
		}
		// The indexes' keys are the handle's strings: held once per work.
		r = &record{of: unique.Make(workOf{binding: store.BindingKey(ref), key: key})}
		w := r.of.Value()
		if a.records[cluster] == nil {
			a.records[cluster] = make(map[string]*record)
		}
		a.records[cluster][w.key] = r
		if a.byBinding[w.binding] == nil {
			a.byBinding[w.binding] = make(map[string]*record)
		}
		a.byBinding[w.binding][cluster] = r
	}
	r.h, r.rev = h, rev
	a.maxOrd[cluster] = max(a.maxOrd[cluster], h.latestOrd, h.ackOrd, h.reportOrd)
	a.touchLocked(r.binding())
}

// forget drops a work whose record was deleted at revision rev.
func (a *Aggregator) forget(cluster, key string, rev int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forgetLocked(workRef{cluster, key}, rev)
}

// forgetLocked drops a work unless its record is newer than rev; a.mu
// must be held.
func (a *Aggregator) forgetLocked(ref workRef, rev int64) {
	r := a.records[ref.cluster][ref.key]
	if r == nil || r.rev > rev {
		return
	}
	a.deleteRecordLocked(ref.cluster, r)
	a.touchLocked(r.binding())
}

// forgetCluster drops every work held for a cluster, and its updates
// still queued (Config.Local: waiting for its budget).
func (a *Aggregator) forgetCluster(cluster string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.records[cluster])
	delete(a.maxOrd, cluster)
	if a.cfg.Local {
		a.dropQueuedLocked(cluster)
	}
	for _, r := range a.records[cluster] {
		a.deleteRecordLocked(cluster, r)
		a.touchLocked(r.binding())
	}
	return n
}

// held returns what is held for a work and its revision; ok false: none.
func (a *Aggregator) held(ref workRef) (h held, rev int64, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.records[ref.cluster][ref.key]; r != nil {
		return r.h, r.rev, true
	}
	return held{}, 0, false
}

// touchLocked marks a binding for Run and wakes it; a.mu must be held.
func (a *Aggregator) touchLocked(bkey string) {
	a.pending[bkey] = true
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// observations copies what the hub holds for a binding, by cluster.
// Records that hold the same content (shared, see held.go) share one
// copy, read-only: a binding of a thousand clusters acked and reported
// alike is flushed with a few messages built, not a thousand of each.
func (a *Aggregator) observations(bkey string) map[string]Observation {
	a.mu.Lock()
	defer a.mu.Unlock()
	type same struct {
		c  unique.Handle[content]
		of unique.Handle[workOf]
	}
	out := make(map[string]Observation, len(a.byBinding[bkey]))
	built := make(map[same]Observation)
	for cluster, r := range a.byBinding[bkey] {
		k := same{r.h.c, r.of}
		o, ok := built[k]
		if !ok {
			o = r.h.obs(r.key())
			built[k] = o
		}
		out[cluster] = o
	}
	return out
}

// versionAt is the version a cluster's agent had acked or reported for
// the binding's work when the store was at revision rev (held.versionAt);
// "" when none.
func (a *Aggregator) versionAt(bkey, cluster string, rev int64) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.byBinding[bkey][cluster]; r != nil {
		return r.h.versionAt(rev)
	}
	return ""
}

// dropBinding forgets the records of a deleted binding.
func (a *Aggregator) dropBinding(bkey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for cluster, r := range a.byBinding[bkey] {
		a.deleteRecordLocked(cluster, r)
	}
	delete(a.byBinding, bkey)
}

// deleteRecordLocked drops r, cluster's record, from both indexes; a.mu
// must be held.
func (a *Aggregator) deleteRecordLocked(cluster string, r *record) {
	w := r.of.Value()
	if a.records[cluster][w.key] == r {
		delete(a.records[cluster], w.key)
		if len(a.records[cluster]) == 0 {
			delete(a.records, cluster)
		}
	}
	if a.byBinding[w.binding][cluster] == r {
		delete(a.byBinding[w.binding], cluster)
		if len(a.byBinding[w.binding]) == 0 {
			delete(a.byBinding, w.binding)
		}
	}
}

// takePending returns and clears the bindings touched since the last call.
func (a *Aggregator) takePending() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.pending))
	for k := range a.pending {
		out = append(out, k)
	}
	clear(a.pending)
	return out
}
