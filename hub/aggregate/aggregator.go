package aggregate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/clusters"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/internal/protocol"
)

// DefaultFlushInterval is how long reports for one binding are coalesced
// before its status is written: at most one write per binding per
// interval.
const DefaultFlushInterval = 200 * time.Millisecond

// maxOldVersions is how many superseded versions per work are remembered
// to discard late acks and reports of them.
const maxOldVersions = 4

// Interpreter is what the aggregator needs from internal/interpreter.
type Interpreter interface {
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// Leases is what the aggregator needs from hub/clusters.Leases.
type Leases interface {
	List() ([]clusters.Lease, uint64)
	Wait(ctx context.Context, after uint64) (uint64, error)
	Duration() time.Duration
}

// Config configures an Aggregator.
type Config struct {
	// Clock is the time source, the same as the leases'; nil: the wall
	// clock. Coalescing always uses the wall clock.
	Clock clusters.Clock
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
}

// Aggregator implements agentapi.Statuses and writes the aggregated
// statuses to bindings while Run runs.
type Aggregator struct {
	store  *store.Store
	interp Interpreter
	leases Leases
	cfg    Config
	log    hclog.Logger
	kick   chan struct{} // wakes Run after Ack/Report; buffered, 1

	mu        sync.Mutex                    // guards the fields below
	records   map[workRef]*record           // what agents reported
	byBinding map[string]map[string]*record // binding key → cluster → record
	pending   map[string]bool               // binding keys touched since Run looked

	run runState // owned by the goroutine running Run
}

var _ agentapi.Statuses = (*Aggregator)(nil)

// workRef names one work in one cluster.
type workRef struct{ cluster, key string }

// record is what the hub holds for one work in one cluster.
type record struct {
	binding string // binding key
	key     string // work key
	obs     Observation
	old     []string // superseded versions, oldest first
}

// New returns an aggregator over st; Run must be running for statuses to
// be written.
func New(st *store.Store, interp Interpreter, leases Leases, cfg Config, logger hclog.Logger) *Aggregator {
	if cfg.Clock == nil {
		cfg.Clock = clusters.RealClock{}
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
	return &Aggregator{
		store: st, interp: interp, leases: leases, cfg: cfg, log: logger.Named("aggregate"),
		kick:      make(chan struct{}, 1),
		records:   make(map[workRef]*record),
		byBinding: make(map[string]map[string]*record),
		pending:   make(map[string]bool),
	}
}

// ParseWorkKey is the default work key format: the binding key without
// its prefix, "<group>/<Kind>/<namespace|_>/<name>" (group "core" for the
// legacy group), as in the store's layout.
func ParseWorkKey(key string) (store.ObjectRef, bool) {
	return store.ParseObjectKey(store.BindingsPrefix + key)
}

// Ack implements agentapi.Statuses. An ack of a deletion forgets the work.
func (a *Aggregator) Ack(ctx context.Context, cluster string, ack *agentv1.Ack) error {
	if ack.GetResult() == agentv1.ApplyResult_APPLY_RESULT_DELETED {
		a.forget(cluster, ack.GetWorkKey())
		return nil
	}
	a.observe(cluster, ack.GetWorkKey(), ack.GetVersion(), func(o *Observation) { o.Ack = ack })
	return nil
}

// Report implements agentapi.Statuses. A report that fails
// agentapi.ValidateStatusReport is refused (the error wraps
// agentapi.ErrInvalidReport), counted and not recorded, whoever calls.
func (a *Aggregator) Report(ctx context.Context, cluster string, report *agentv1.StatusReport) error {
	if err := agentapi.ValidateStatusReport(report); err != nil {
		a.cfg.Counts.Add("aggregate", guard.KindRefused)
		return fmt.Errorf("cluster %q: %w", cluster, err)
	}
	a.observe(cluster, report.GetWorkKey(), report.GetVersion(), func(o *Observation) { o.Report = report })
	return nil
}

// Digests implements agentapi.Statuses: the digest of the last report the
// hub holds per work. After a hub restart it holds none, so reconnecting
// agents are asked for every status once.
func (a *Aggregator) Digests(ctx context.Context, cluster string) (map[string]syncstate.Digest, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]syncstate.Digest)
	for ref, r := range a.records {
		if ref.cluster == cluster && r.obs.Report != nil {
			out[ref.key] = syncstate.Digest{Version: r.obs.Report.GetVersion(), Digest: r.obs.Report.GetDigest()}
		}
	}
	return out, nil
}

// observe records an ack or report of version, unless version is one the
// work already moved past (agentapi filters those too; this guards against
// a report racing its own supersession).
func (a *Aggregator) observe(cluster, key, version string, set func(*Observation)) {
	ref, ok := a.cfg.BindingOf(key)
	if !ok {
		a.log.Debug("status of a work no binding is known for, ignored", "cluster", cluster, "work", key)
		return
	}
	bkey := store.BindingKey(ref)
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.records[workRef{cluster, key}]
	if r == nil {
		r = &record{binding: bkey, key: key}
		a.records[workRef{cluster, key}] = r
		if a.byBinding[bkey] == nil {
			a.byBinding[bkey] = make(map[string]*record)
		}
		a.byBinding[bkey][cluster] = r
	}
	if slices.Contains(r.old, version) {
		return
	}
	if r.obs.Latest != "" && r.obs.Latest != version {
		r.old = append(r.old, r.obs.Latest)
		if len(r.old) > maxOldVersions {
			r.old = r.old[1:]
		}
	}
	r.obs.Latest = version
	set(&r.obs)
	a.touchLocked(bkey)
}

// forget drops a work the agent deleted.
func (a *Aggregator) forget(cluster, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.records[workRef{cluster, key}]
	if r == nil {
		return
	}
	delete(a.records, workRef{cluster, key})
	if a.byBinding[r.binding][cluster] == r {
		delete(a.byBinding[r.binding], cluster)
	}
	a.touchLocked(r.binding)
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
func (a *Aggregator) observations(bkey string) map[string]Observation {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]Observation, len(a.byBinding[bkey]))
	for cluster, r := range a.byBinding[bkey] {
		out[cluster] = r.obs
	}
	return out
}

// latest is the version a cluster's agent last acked or reported for the
// binding's work; "" when none.
func (a *Aggregator) latest(bkey, cluster string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.byBinding[bkey][cluster]; r != nil {
		return r.obs.Latest
	}
	return ""
}

// dropBinding forgets the records of a deleted binding.
func (a *Aggregator) dropBinding(bkey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for cluster, r := range a.byBinding[bkey] {
		if a.records[workRef{cluster, r.key}] == r {
			delete(a.records, workRef{cluster, r.key})
		}
	}
	delete(a.byBinding, bkey)
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
