package render

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/backoff"
)

// Defaults of Config.
const (
	// DefaultRemovedRetention is how long a cluster remembers a removed
	// work, so that an agent reconnecting within it is told the removal
	// with its deletion policy and reason. Correctness does not rest on
	// it: past it, or after a hub restart, the agent still deletes the
	// work, because the hub's authoritative SyncDone lists every work of
	// the cluster and the agent deletes what it holds from this hub that
	// is not listed (with the work's own deletion policy, reason
	// NOT_IN_HUB_SET).
	DefaultRemovedRetention = 24 * time.Hour
	// DefaultMaxRemoved is the most removed works a cluster remembers.
	DefaultMaxRemoved = 10000
)

// Tuned constants of the loop.
const (
	// relistBackoff is the wait before listing again after a store failure
	// other than compaction.
	relistBackoff = 2 * time.Second
	// retryMin and retryMax bound the wait before rendering again a work
	// whose render failed (doubling from retryMin, no jitter: one loop).
	retryMin = time.Second
	retryMax = time.Minute
	// maxBatch is the most store events applied before rendering; a burst
	// of changes to one template renders it once.
	maxBatch = 1000
)

// Source is what the renderer reads from the store; *store.Store
// satisfies it.
type Source interface {
	ListEach(ctx context.Context, prefix string, each func(store.KV)) (int64, error)
	Watch(ctx context.Context, prefix string, fromRev int64, opts ...store.WatchOption) <-chan store.Event
}

// Config configures a Renderer; the zero value uses the defaults.
type Config struct {
	// RemovedRetention is how long each cluster remembers a removed work
	// for Gone and Changes (default DefaultRemovedRetention).
	RemovedRetention time.Duration
	// MaxRemoved is the most removed works each cluster remembers
	// (default DefaultMaxRemoved).
	MaxRemoved int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Authority says whether the hub may remove works (nil: always). While
	// it says no, no work is removed from a cluster and Gone vouches for
	// nothing.
	Authority Authority
	// Counts tallies undecodable objects and recovered panics; nil counts
	// nothing.
	Counts *guard.Counts
	// Customizations, when set, says which kinds a changed, created or
	// deleted interpreter customization or webhook configuration concerns
	// (hub/customizations' Watcher): the templates of those kinds are
	// rendered again, the others are not. Nothing is rendered before it
	// has loaded the stored ones, so that no agent gets a work rendered
	// without them. Nil: templates render again only when their own inputs
	// change.
	Customizations Customizations
}

// Customizations is what the renderer needs from hub/customizations.
type Customizations interface {
	Subscribe() *customizations.Subscription
	Synced() <-chan struct{}
}

// Authority is what the renderer needs from hub/authority.
type Authority interface {
	// Authoritative is false, with the reason, while the hub must not
	// cause deletes.
	Authoritative() (bool, string)
}

// verifier is an Authority that can check the store again (hub/authority
// can); the renderer asks it before it publishes a list.
type verifier interface {
	Verify(ctx context.Context) error
}

// authoritative asks cfg.Authority, if any.
func (r *Renderer) authoritative() (bool, string) {
	if r.cfg.Authority == nil {
		return true, ""
	}
	return r.cfg.Authority.Authoritative()
}

// Renderer keeps every cluster's works derived from the store. Run drives
// it; Current, Changes and Gone serve the agent streams (agentapi.Works).
type Renderer struct {
	src    Source
	interp work.Interpreter
	cfg    Config
	log    hclog.Logger
	state  *state

	// applied is the store revision whose changes are all published.
	applied atomic.Int64
	// undecodable is how many stored objects do not decode now (bad has
	// their keys); while any does, Current may lack works the hub means
	// the clusters to keep, and Authoritative is false.
	undecodable atomic.Int64

	// Only Run's goroutine uses these.
	in      *inputs
	retries map[string]retry
	bad     map[string]bool // store keys of the objects that do not decode
	// reinterpreted is the subscription to Config.Customizations; nil
	// without one (its Ready is then a nil channel, never ready).
	reinterpreted *customizations.Subscription
	// remotes are the renders that call a webhook, run off the loop.
	remotes *remoteRenders
}

// retry is a work key whose render failed, to render again at at.
type retry struct {
	at       time.Time
	failures int
}

// New returns a renderer of the objects in src, revising replicas with
// interp. It renders nothing until Run.
func New(src Source, interp work.Interpreter, cfg Config, logger hclog.Logger) *Renderer {
	if cfg.RemovedRetention <= 0 {
		cfg.RemovedRetention = DefaultRemovedRetention
	}
	if cfg.MaxRemoved <= 0 {
		cfg.MaxRemoved = DefaultMaxRemoved
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Renderer{src: src, interp: interp, cfg: cfg, log: logger.Named("render"),
		state: newState(cfg.RemovedRetention, cfg.MaxRemoved), retries: map[string]retry{}, bad: map[string]bool{},
		remotes: newRemoteRenders()}
}

// Run lists and watches the store and keeps the works current until ctx
// ends, then returns nil once the store watch and the renders it started
// off the loop have stopped. A compacted watch lists again at once,
// another failure after relistBackoff; the published works stay as they
// are meanwhile, and a new list publishes only what differs.
func (r *Renderer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer r.remotes.wait()
	defer cancel()
	if c := r.cfg.Customizations; c != nil {
		// Subscribed before the first list: a change the list's render
		// did not see yet is handed over after it.
		sub := c.Subscribe()
		defer sub.Close()
		r.reinterpreted = sub
		select {
		case <-c.Synced():
		case <-ctx.Done():
			return nil
		}
	}
	return store.Follow(ctx, r.log, relistBackoff, r.session)
}

// session lists everything, publishes it, then follows the watch until
// ctx ends or the watch fails. The watch goroutine (in the store) has
// exited when it returns.
func (r *Renderer) session(ctx context.Context) error {
	holdFault(ctx)
	rev, err := r.load(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	events := r.src.Watch(wctx, store.Root, rev+1, store.DeletesWithoutValue)
	defer func() {
		cancel()
		for range events {
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var last int64
	for {
		r.armRetry(timer)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			holdFault(ctx)
			if err := r.batch(ev, ok, events, &last); err != nil {
				return err
			}
		case <-timer.C:
			r.dueRetries()
		case <-r.reinterpreted.Ready():
			r.in.markScope(r.reinterpreted.Take())
		case p := <-r.remotes.results:
			r.remoteDone(ctx, p)
		}
		r.state.stamp = max(r.state.stamp, last)
		r.flush(ctx)
		r.published(last)
	}
}

// published records that every store change up to rev is published.
func (r *Renderer) published(rev int64) {
	if rev > r.applied.Load() {
		r.applied.Store(rev)
	}
}

// load replaces the inputs with a fresh list, marks every work (those
// published before included, so that what is gone is removed) and
// publishes. It returns the list revision.
func (r *Renderer) load(ctx context.Context) (int64, error) {
	r.in = newInputs()
	r.bad = map[string]bool{}
	r.in.loading = true
	rev, err := r.src.ListEach(ctx, store.Root, func(kv store.KV) {
		r.apply(store.Event{Type: store.EventPut, KV: kv})
	})
	if err != nil {
		return 0, err
	}
	if v, ok := r.cfg.Authority.(verifier); ok {
		// A list may come from a store replaced or restored under the
		// running hub: check before its smaller contents remove works
		// (publishing them, below).
		if err := v.Verify(ctx); err != nil {
			return 0, fmt.Errorf("verify the store before publishing its list: %w", err)
		}
	}
	r.in.loading = false
	for key := range r.in.bindings {
		r.in.markAll(key)
	}
	for key := range r.state.refs {
		r.in.markAll(key)
	}
	for key := range r.state.unsure {
		r.in.markAll(key)
	}
	r.dropUnknownClusters()
	r.state.stamp = max(r.state.stamp, rev)
	r.flush(ctx)
	r.published(rev)
	r.log.Debug("loaded", "revision", rev, "templates", len(r.in.templates), "bindings", len(r.in.bindings), "clusters", len(r.in.clusters))
	return rev, nil
}

// dropUnknownClusters drops the published clusters with works that a new
// list no longer has (deleted while the watch was down). Readers create
// clusters too, hence the lock.
func (r *Renderer) dropUnknownClusters() {
	r.state.mu.Lock()
	defer r.state.mu.Unlock()
	for name, cw := range r.state.clusters {
		if r.in.clusters[name] == nil && len(cw.works) > 0 {
			r.in.dropped = append(r.in.dropped, name)
		}
	}
}

// batch applies ev and the events already waiting, up to maxBatch, and
// sets last to the revision of the last one applied.
func (r *Renderer) batch(ev store.Event, ok bool, events <-chan store.Event, last *int64) error {
	for i := 0; ; i++ {
		if !ok {
			return errors.New("render: store watch closed")
		}
		if ev.Err != nil {
			return ev.Err
		}
		r.apply(ev)
		*last = ev.KV.Revision
		if i == maxBatch {
			return nil
		}
		select {
		case ev, ok = <-events:
		default:
			return nil
		}
	}
}

// apply records one stored change. An object that does not decode, or
// whose apply panicked, is unknown: it keeps its last good value (none,
// during a list), its works keep what they have (inputs.broken: keepPlan)
// and the renderer is not authoritative (bad) until it applies cleanly.
// Both are logged and counted.
func (r *Renderer) apply(ev store.Event) {
	err := guard.Do(r.log, r.cfg.Counts, "render", ev.KV.Key, func() error {
		applyFault(ev.KV.Key)
		return r.in.apply(ev)
	})
	switch {
	case err == nil:
		delete(r.bad, ev.KV.Key)
	case errors.Is(err, guard.ErrPanicked):
		r.log.Error("applying a stored object panicked; it is unknown: its works keep what they have and agents are told the hub's view is not authoritative", "key", ev.KV.Key)
		r.in.broken[ev.KV.Key] = true
		r.bad[ev.KV.Key] = true
	default:
		r.cfg.Counts.Add("render", guard.KindDecode)
		r.log.Error("stored object does not decode; its last good value is kept and agents are told the hub's view is not authoritative", "key", ev.KV.Key, "error", err)
		r.bad[ev.KV.Key] = true
	}
	r.undecodable.Store(int64(len(r.bad)))
}

// Authoritative reports whether the renderer vouches that Current is the
// hub's complete view of the cluster's works, so that an agent may delete
// what it holds from this hub and the view lacks (SyncDone.authoritative):
// false while some stored object does not decode (a template, binding or
// cluster record without a last good value is missing from the view),
// while a work that may be held by the cluster did not render (its render
// failed or panicked: unsure.go), or while Config.Authority says the
// store was lost or regressed.
func (r *Renderer) Authoritative(cluster string) bool {
	if ok, _ := r.authoritative(); !ok || r.undecodable.Load() > 0 {
		return false
	}
	s := r.state
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.unsureFor(cluster) {
		return true
	}
	r.log.Warn("not authoritative for the cluster: works it may hold did not render", "cluster", cluster,
		"unrendered", len(s.unsure), "some", s.someUnsure(maxLoggedKeys))
	return false
}

// maxLoggedKeys is the most work keys a log line lists.
const maxLoggedKeys = 5

// flush renders the marked works and publishes them as one revision,
// after the renders finished off the loop. A key whose render may call a
// webhook is published without its renders first (its clusters keep what
// they have) and rendered off the loop (remoteRenders); a key still in
// flight is planned again once its render is committed.
func (r *Renderer) flush(ctx context.Context) {
	finished := r.remotes.takeFinished()
	if len(r.in.dirty) == 0 && len(r.in.dropped) == 0 && len(finished) == 0 && r.state.readyDone {
		return
	}
	plans := make([]*plan, 0, len(finished)+len(r.in.dirty))
	plans = append(plans, finished...)
	for key, only := range r.in.dirty {
		if r.remotes.inflight[key] {
			r.remotes.deferKey(key, only)
			continue
		}
		plans = append(plans, r.planDirty(ctx, key, only))
	}
	r.state.commit(plans, r.in.dropped, r.cfg.Now())
	r.in.dirty = map[string]map[string]bool{}
	r.in.dropped = nil
}

// planDirty plans one marked key, rendering it on the loop unless its
// render may call a webhook.
func (r *Renderer) planDirty(ctx context.Context, key string, only map[string]bool) *plan {
	var p *plan
	remote := false
	err := guard.Do(r.log, r.cfg.Counts, "render", key, func() error {
		var jobs []renderJob
		p, jobs = r.preparePlan(key, only)
		if remote = len(jobs) > 0 && r.remote(key); remote {
			p.unsure = r.state.unsure[key] // outstanding: as unsure as before, until its render ends
			r.startRemote(ctx, p, jobs)
			return nil
		}
		p.set, p.failed = r.runJobs(ctx, key, jobs)
		return nil
	})
	if err != nil {
		p = r.keepPlan(key)
		p.failed = true // retried with backoff; the other keys go on
	}
	if !remote {
		r.noteResult(p)
	}
	return p
}

// noteResult schedules a retry of a failed plan, and records where its
// key may be held (unsureOf; keepPlan has), or forgets a past failure.
func (r *Renderer) noteResult(p *plan) {
	key := p.key
	if !p.failed {
		delete(r.retries, key)
		return
	}
	if p.unsure == nil {
		p.unsure = r.unsureOf(key, p.vouch, p.drop)
	}
	rt := r.retries[key]
	wait := backoff.Policy{Base: retryMin, Max: retryMax}.Step(rt.failures)
	r.retries[key] = retry{at: r.cfg.Now().Add(wait), failures: rt.failures + 1}
}

// armRetry sets timer to the earliest retry (or stops it).
func (r *Renderer) armRetry(timer *time.Timer) {
	timer.Stop()
	var next time.Time
	for key, rt := range r.retries {
		if r.remotes.inflight[key] {
			continue // its result schedules it again
		}
		if next.IsZero() || rt.at.Before(next) {
			next = rt.at
		}
	}
	if !next.IsZero() {
		timer.Reset(max(next.Sub(r.cfg.Now()), 0))
	}
}

// dueRetries marks the keys whose retry time has come.
func (r *Renderer) dueRetries() {
	now := r.cfg.Now()
	for key, rt := range r.retries {
		if !rt.at.After(now) && !r.remotes.inflight[key] {
			r.in.markAll(key)
		}
	}
}
