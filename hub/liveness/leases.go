package liveness

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/internal/protocol"
	"google.golang.org/protobuf/proto"
)

// DefaultPauseThreshold is how much later than due Run may wake before it
// concludes that the hub was not running (SIGSTOP, a VM pause, a long GC or
// scheduling stall): 5 s, half an agent heartbeat interval, far above a
// timer's normal lateness.
const DefaultPauseThreshold = 5 * time.Second

// pauseTick is how often Run wakes to notice a pause, whatever the leases.
const pauseTick = time.Second

// State and Lease are hub/pipeline/lease's, where readers that run no
// loop (the client API, the placement stage) find them.
type (
	State = lease.State
	Lease = lease.Lease
)

// The states of a cluster's lease (lease.State*).
const (
	StateReady    = lease.StateReady
	StateNotReady = lease.StateNotReady
	StateUnknown  = lease.StateUnknown
)

// Config configures Leases.
type Config struct {
	// LeaseDuration is how long after a heartbeat a cluster turns Unknown;
	// zero means protocol.LeaseDuration.
	LeaseDuration time.Duration
	// Clock is the time source; nil means RealClock.
	Clock Clock
	// PauseThreshold: when Run wakes more than this later than it meant to,
	// the hub was paused, and no lease expires until one lease duration
	// after the resume, so that the agents' heartbeats (queued in their
	// streams, or sent once they reconnect) get a chance to arrive first.
	// Zero means DefaultPauseThreshold; negative turns the check off (tests
	// that move a fake clock in jumps).
	PauseThreshold time.Duration
	// Logger says when a pause was noticed; nil logs nothing.
	Logger hclog.Logger
	// HeartbeatLimits bounds the heartbeats CheckHeartbeat lets through.
	HeartbeatLimits HeartbeatLimits
}

// Leases holds every cluster's lease. Its methods are safe for concurrent
// use; Run must be running for leases to expire.
type Leases struct {
	duration time.Duration
	clock    Clock
	pause    time.Duration // Config.PauseThreshold; negative: no check
	log      hclog.Logger
	kick     chan struct{} // wakes Run to re-arm its timer; buffered, 1
	limits   HeartbeatLimits

	mu      sync.Mutex // guards the fields below
	leases  map[string]*Lease
	rev     uint64        // moves on every change consumers care about
	changed chan struct{} // closed and replaced at every change
	// awake is when expire last ran: Run wakes at least every pauseTick,
	// so a longer gap means the hub was not running.
	awake time.Time
	// holdUntil: no lease expires before it (set on a pause).
	holdUntil time.Time
	// pauses counts the pauses noticed.
	pauses uint64
	// own names the replica whose Publisher renews these leases directly
	// (PublisherConfig.Local): Follow skips the records it writes.
	own string
}

// New returns empty Leases for cfg.
func New(cfg Config) *Leases {
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = protocol.LeaseDuration
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.PauseThreshold == 0 {
		cfg.PauseThreshold = DefaultPauseThreshold
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Leases{
		duration: cfg.LeaseDuration,
		clock:    cfg.Clock,
		pause:    cfg.PauseThreshold,
		log:      cfg.Logger.Named("leases"),
		kick:     make(chan struct{}, 1),
		limits:   cfg.HeartbeatLimits.withDefaults(),
		leases:   make(map[string]*Lease),
		changed:  make(chan struct{}),
	}
}

// Duration returns the lease duration.
func (l *Leases) Duration() time.Duration { return l.duration }

// Pauses returns how many times Run noticed that the hub had not been
// running, and until when expiry is held because of the last one.
func (l *Leases) Pauses() (n uint64, holdUntil time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pauses, l.holdUntil
}

// Heartbeat renews cluster's lease with hb's capacity and conditions.
func (l *Leases) Heartbeat(cluster string, hb *agentv1.Heartbeat) {
	now := l.clock.Now()
	l.renew(cluster, hb, now, now)
}

// CheckHeartbeat says why hb is past Config.HeartbeatLimits (wrapping
// ErrHeartbeatTooLarge), or returns nil: hub/agentapi asks before handing
// a heartbeat over, and refuses it past them.
func (l *Leases) CheckHeartbeat(hb *agentv1.Heartbeat) error { return l.limits.Check(hb) }

// heartbeatAt renews cluster's lease with a heartbeat received at, by this
// replica's clock (Follow: when it first saw the record): as if it had
// arrived then, never later than now, and not at all when it is a lease
// duration old.
func (l *Leases) heartbeatAt(cluster string, hb *agentv1.Heartbeat, at time.Time) {
	now := l.clock.Now()
	if at.After(now) {
		at = now
	}
	if now.Sub(at) >= l.duration {
		return
	}
	l.renew(cluster, hb, at, now)
}

// renew records hb, received at, as cluster's last heartbeat; a state
// change is dated now, when this hub sees it.
func (l *Leases) renew(cluster string, hb *agentv1.Heartbeat, at, now time.Time) {
	state := stateOf(hb)
	l.mu.Lock()
	cur, ok := l.leases[cluster]
	if ok && at.Before(cur.LastHeartbeat) {
		l.mu.Unlock()
		return // older than the heartbeat the lease holds (a record listed late)
	}
	if !ok {
		cur = &Lease{Cluster: cluster}
		l.leases[cluster] = cur
	}
	wasValid := ok && cur.State != StateUnknown
	changed := !ok || cur.State != state || !proto.Equal(cur.Heartbeat, hb)
	if cur.State != state {
		cur.State, cur.Since = state, now
	}
	if at.After(cur.LastHeartbeat) {
		cur.LastHeartbeat = at
	}
	cur.Heartbeat = hb
	if changed {
		l.bumpLocked()
	}
	l.mu.Unlock()
	if !wasValid {
		l.wake() // Run has no timer for this lease yet
	}
}

// setOwn names the replica whose Publisher renews these leases directly.
func (l *Leases) setOwn(replica string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = replica
}

// ownRecord says whether a record written by replica was applied already,
// when its heartbeat was received (PublisherConfig.Local).
func (l *Leases) ownRecord(replica string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.own != "" && replica == l.own
}

// Touch keeps cluster's lease valid from now, if it is valid: a stream of
// its agent that this replica holds back unread (hub/agentapi's Toucher),
// or a heartbeat too large to hold. It changes neither state nor content
// and wakes no one; a lease that ran out, or one this replica has not met,
// comes (back) only with a heartbeat.
func (l *Leases) Touch(cluster string) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.leases[cluster]; ok && cur.State != StateUnknown && now.After(cur.LastHeartbeat) {
		cur.LastHeartbeat = now
	}
}

// holdExpiry keeps every lease from running out until one lease duration
// from now (or later, if already held longer): Follow's view of the
// renewals has a gap.
func (l *Leases) holdExpiry() {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := now.Add(l.duration); until.After(l.holdUntil) {
		l.holdUntil = until
	}
}

// stateOf is the state a heartbeat puts a cluster in.
func stateOf(hb *agentv1.Heartbeat) State {
	for _, c := range hb.GetConditions() {
		if c.GetType() == "Ready" && c.GetStatus() == agentv1.ConditionStatus_CONDITION_STATUS_FALSE {
			return StateNotReady
		}
	}
	return StateReady
}

// Get returns a copy of cluster's lease; ok is false for a cluster that
// never sent a heartbeat to this hub.
func (l *Leases) Get(cluster string) (lease Lease, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.leases[cluster]; ok {
		return *cur, true
	}
	return Lease{}, false
}

// List returns a copy of every lease, sorted by cluster, and the revision
// it reflects.
func (l *Leases) List() ([]Lease, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Lease, 0, len(l.leases))
	for _, cur := range l.leases {
		out = append(out, *cur)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out, l.rev
}

// Wait blocks until the revision is past after, then returns it; or returns
// ctx's error when ctx ends first. Wait(ctx, 0) returns at once once
// anything happened.
func (l *Leases) Wait(ctx context.Context, after uint64) (uint64, error) {
	for {
		l.mu.Lock()
		rev, changed := l.rev, l.changed
		l.mu.Unlock()
		if rev > after {
			return rev, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return rev, ctx.Err()
		}
	}
}

// bumpLocked moves the revision and wakes the waiters; l.mu must be held.
func (l *Leases) bumpLocked() {
	l.rev++
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Leases) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}
