package rollout

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/protocol"
)

// PollInterval is how often a pass runs without any change (acks,
// reports and leases do not wake the loop). Tuned so that a soak of a few
// seconds is judged within a second of its end.
const PollInterval = 500 * time.Millisecond

// Source is the replica's view of the store (*view.View).
type Source interface {
	Subscribe(prefixes ...string) *view.Subscription
}

// Renders is what the loop needs of the renderer (*render.Renderer).
type Renders interface {
	Rollout(key string) (render.Rollout, bool)
	RolloutChanged() <-chan struct{}
}

// Observer is what the loop needs of the aggregator (*aggregate.Aggregator).
type Observer interface {
	Observed(bkey string, b *workv1alpha1.ResourceBinding) map[string]aggregate.Observed
}

// Leases is what the loop needs of hub/liveness.Leases.
type Leases interface {
	Get(cluster string) (lease.Lease, bool)
	Duration() time.Duration
}

// Config configures a Loop; the zero value uses the defaults.
type Config struct {
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// StartupGrace is how long after Run starts a cluster without a lease
	// counts as reachable (its agent has not reconnected to a restarted
	// hub yet); zero: the lease duration plus protocol.MaxReconnectDelay.
	StartupGrace time.Duration
}

// Loop advances rollouts. Its state belongs to the goroutine running Run.
type Loop struct {
	st      *store.Store // fenced: the leader's writes
	view    Source
	renders Renders
	obs     Observer
	leases  Leases
	cfg     Config
	log     hclog.Logger

	graceUntil time.Time
	in         *inputs
	wakeAt     time.Time // the earliest time a Step asked to be woken at
	// resumed: work keys stepped in this term (a gap before the first
	// step is not counted: Record.Unwatched).
	resumed map[string]bool
}

// New returns a loop that reads v, renders, obs and leases and writes
// through st (the fenced store).
func New(st *store.Store, v Source, renders Renders, obs Observer, leases Leases, cfg Config, logger hclog.Logger) *Loop {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Loop{resumed: map[string]bool{}, st: st, view: v, renders: renders, obs: obs, leases: leases, cfg: cfg, log: logger.Named("rollout")}
}

// Run advances every rollout until ctx ends, then returns nil.
func (l *Loop) Run(ctx context.Context) error {
	grace := l.cfg.StartupGrace
	if grace <= 0 {
		grace = l.leases.Duration() + protocol.MaxReconnectDelay
	}
	l.graceUntil = l.cfg.Now().Add(grace)
	sub := l.view.Subscribe(store.ObjectsPrefix, store.BindingsPrefix, store.ClustersPrefix, store.RolloutsPrefix)
	defer sub.Close()
	poll := time.NewTicker(PollInterval)
	defer poll.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
			l.take(sub.Take())
		case <-l.renders.RolloutChanged():
		case <-poll.C:
		case <-timer.C:
		}
		if l.in == nil {
			continue // nothing listed yet
		}
		l.wakeAt = time.Time{}
		l.pass(ctx)
		timer.Stop()
		if !l.wakeAt.IsZero() {
			timer.Reset(max(time.Until(l.wakeAt), time.Millisecond))
		}
	}
}

// take applies a batch of the view: a full one replaces the inputs.
func (l *Loop) take(b view.Batch) {
	if b.Full || l.in == nil {
		l.in = newInputs()
	}
	for _, c := range b.Changes {
		if err := l.in.apply(c); err != nil {
			l.log.Warn("stored object does not decode; its rollout is held", "key", c.Key, "error", err)
		}
	}
}

// pass steps every paced work key, and deletes the records of templates
// that are gone (nothing is held for a template that does not exist).
func (l *Loop) pass(ctx context.Context) {
	for _, key := range l.in.pacedKeys() {
		if ctx.Err() != nil {
			return
		}
		l.stepKey(ctx, key)
	}
	for key, e := range l.in.records {
		if _, ok := l.in.templates[key]; ok || e.rec == nil || l.in.brokenTemplates[key] || ctx.Err() != nil {
			continue
		}
		if _, err := l.st.Delete(ctx, store.RolloutKey(key), e.rev); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
			l.log.Warn("rollout record of a deleted template not deleted", "work", key, "error", err)
		}
	}
}

// reachable reports whether cluster's agent may be reached: its lease is
// not Unknown, or it has none yet within the start-up grace.
func (l *Loop) reachable(cluster string, now time.Time) bool {
	ls, ok := l.leases.Get(cluster)
	if !ok {
		return now.Before(l.graceUntil)
	}
	return ls.State != lease.StateUnknown
}

// labelsOf returns the cluster record's labels (nil when unknown).
func (l *Loop) labelsOf(name string) map[string]string {
	if c := l.in.clusters[name]; c != nil {
		return c.Labels
	}
	return nil
}
