package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/protocol"
)

// Tuned intervals.
const (
	// retryAfter is when a binding whose write failed (not a conflict) is
	// tried again, on the loop's clock.
	retryAfter = 2 * time.Second
	// conflictRetries is how many times one reconcile re-reads a binding
	// after an optimistic-write conflict before it is retried later.
	conflictRetries = 5
	// maxBatch is the most inputs (watch events, lease changes) the loop
	// takes in between two processing passes, when they are already
	// waiting: clusters joining together (a fleet registering, agents
	// reconnecting to a restarted hub) cost one refresh of the members and
	// one pass, not one each. Bounded so that a steady stream of events
	// does not hold the pass off.
	maxBatch = 1000
	// maxInFlight is how many binding writes of one processing pass are
	// sent to the store at once.
	maxInFlight = 16
)

// Source is the replica's view of the store (*view.View).
type Source interface {
	Subscribe(prefixes ...string) *view.Subscription
}

// Leases is what the loop needs from hub/liveness.Leases.
type Leases interface {
	// List returns every lease and the revision it reflects.
	List() ([]lease.Lease, uint64)
	// Wait blocks until the revision is past after.
	Wait(ctx context.Context, after uint64) (uint64, error)
	// Duration is the lease duration.
	Duration() time.Duration
}

// Config configures a Loop. The zero value is Karmada's defaults: an
// unreachable cluster keeps its bindings, unless their policy asks for
// failover (spec.failover.cluster), and no limit of works per cluster.
type Config struct {
	// Clock is the time source, the same as the leases'; nil: the wall
	// clock.
	Clock liveness.Clock
	// GracefulEvictionTimeout bounds eviction tasks without their own
	// grace period; zero: DefaultGracefulEvictionTimeout.
	GracefulEvictionTimeout time.Duration
	// StartupGrace is how long after Run starts a cluster without a lease
	// keeps its stored state before it counts as unreachable; zero: the
	// lease duration plus protocol.MaxReconnectDelay, the longest an agent
	// waits before it reconnects to a restarted hub.
	StartupGrace time.Duration
	// FailoverUnreachable makes every Divided binding fail over from an
	// unreachable cluster once its toleration has run out, as if each
	// policy set spec.failover.cluster (hub flag --failover-unreachable).
	FailoverUnreachable bool
	// UnreachableToleration is the tolerationSeconds of the default
	// tolerations of the unreachable and not-ready NoExecute taints; zero:
	// DefaultUnreachableToleration (300 s).
	UnreachableToleration time.Duration
	// MaxWorks is the most works the hub serves to one cluster (hub flag
	// --max-works-per-cluster, the same limit hub/agentapi enforces on the
	// stream): the scheduler places no new workload on a cluster holding
	// that many. Zero: no limit.
	MaxWorks int
	// EnableEmptyWorkloadPropagation is Karmada's flag of that name.
	EnableEmptyWorkloadPropagation bool
}

// Loop schedules bindings. Its state belongs to the goroutine running Run;
// call Run once at a time.
type Loop struct {
	store  *store.Store // writes (fenced), re-reads and the NoExecute floor
	view   Source       // bindings and clusters, decoded once
	leases Leases
	cfg    Config
	clock  liveness.Clock
	log    hclog.Logger

	graceUntil time.Time
	bindings   map[string]*entry                  // by binding key
	stored     map[string]clusterv1alpha1.Cluster // by cluster name
	// storedGen numbers each stored cluster's last change (from gen) for
	// cache, which keeps the members built from them.
	storedGen map[string]uint64
	gen       uint64
	cache     memberCache
	order     []string // stored's names, sorted; nil: to sort again
	// storedList is stored in order; nil: to list again.
	storedList []clusterv1alpha1.Cluster
	// members is the cluster snapshot (nil until the first one after a
	// load), index the same by name.
	members  []place.Member
	index    place.MemberIndex
	dirty    map[string]bool      // binding keys to reconcile
	rechecks map[string]time.Time // binding key → when to reconcile again
	// unhealthy is the application failover's memory: binding key →
	// cluster → when its application was first seen Unhealthy, for
	// bindings written before Step recorded it on them
	// (AnnotationUnhealthySince, which a new leader continues from).
	unhealthy map[string]map[string]time.Time
	armedAt   time.Time // the time timer fires at
	timer     <-chan time.Time

	// disrupted is full disruption mode (disruption.go); written by Run's
	// goroutine, read by Disrupted.
	disrupted atomic.Bool
	// noExecuteFloor is when the last full disruption ended, seen by this
	// loop or stored by an earlier leader (loadFloor); floorUnsaved: it
	// moved and is not stored yet (saveFloor).
	noExecuteFloor time.Time
	floorUnsaved   bool
	// works counts each cluster's works (worksOf every cached binding);
	// full holds the clusters with at least cfg.MaxWorks of them.
	works map[string]int
	full  map[string]bool

	// leaseRev is the lease revision the members reflect; settled is the
	// one the last processing pass reflected, and armed the time (Unix ns,
	// 0: none) its timer is set to, for tests.
	leaseRev uint64
	settled  atomic.Uint64
	armed    atomic.Int64
	// taken is the view revision of the last batch taken in, and
	// viewSettled the one the last processing pass reflected, for tests.
	taken       int64
	viewSettled atomic.Int64

	passes    atomic.Uint64 // processing passes done, for tests
	refreshes atomic.Uint64 // member snapshots built, for tests
	examined  atomic.Uint64 // bindings Step ran on, for tests
	writes    atomic.Uint64 // bindings written, for tests and logs
}

// entry is one cached binding: the view's (shared: never changed in
// place), without its aggregated status items, or one the loop read or
// decided (items: with the stored items, which Step reads only when
// readsHealth).
type entry struct {
	b     *workv1alpha1.ResourceBinding
	rev   int64
	in    *interest // interestOf(b), once asked
	items bool      // b holds the binding's stored aggregated status items
}

// interest is interestOf(e.b), derived on first use.
func (e *entry) interest() *interest {
	if e.in == nil {
		e.in = interestOf(e.b)
	}
	return e.in
}

// New returns a loop that reads v, writes st and follows leases.
func New(st *store.Store, v Source, leases Leases, cfg Config, logger hclog.Logger) *Loop {
	if cfg.Clock == nil {
		cfg.Clock = liveness.RealClock{}
	}
	if cfg.GracefulEvictionTimeout <= 0 {
		cfg.GracefulEvictionTimeout = place.DefaultGracefulEvictionTimeout
	}
	if cfg.StartupGrace <= 0 {
		cfg.StartupGrace = leases.Duration() + protocol.MaxReconnectDelay
	}
	return &Loop{store: st, view: v, leases: leases, cfg: cfg, clock: cfg.Clock, log: logger.Named("schedloop"),
		unhealthy: map[string]map[string]time.Time{}}
}

// Run schedules bindings until ctx ends, then returns nil. Each full
// batch of the view loads the loop anew; a load that fails (the
// NoExecute floor not read) is tried again after view.RelistBackoff. Its
// goroutine following the leases has exited when it returns.
func (l *Loop) Run(ctx context.Context) error {
	l.graceUntil = l.clock.Now().Add(l.cfg.StartupGrace)
	leaseCh, stop := liveness.Changed(ctx, l.leases)
	defer stop()
	sub := l.view.Subscribe(store.BindingsPrefix, store.ClustersPrefix)
	defer sub.Close()
	for {
		err := l.session(ctx, sub, leaseCh)
		if ctx.Err() != nil {
			return nil
		}
		l.log.Warn("session ended, listing again", "error", err, "backoff", view.RelistBackoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(view.RelistBackoff):
		}
		sub.Relist()
	}
}

// session loads the view's next full batch, then reconciles on every
// change of the view, lease change and due recheck until ctx ends or a
// load fails.
func (l *Loop) session(ctx context.Context, sub *view.Subscription, leaseCh <-chan struct{}) error {
	b, ok := sub.WaitFull(ctx)
	if !ok {
		return ctx.Err()
	}
	if err := l.load(ctx, b); err != nil {
		return err
	}
	in := inputs{view: sub, leases: leaseCh}
	for {
		l.process(ctx)
		if err := l.takeBatch(ctx, in); err != nil {
			return err
		}
	}
}
