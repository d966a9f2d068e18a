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
	"github.com/tetherproj/tether/hub/view"
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
	// retryMin and retryMax bound the wait before rendering again a work
	// whose render failed (doubling from retryMin, no jitter: one loop).
	retryMin = time.Second
	retryMax = time.Minute
)

// Source is the replica's view of the store; *view.View satisfies it.
type Source interface {
	Subscribe(prefixes ...string) *view.Subscription
}

// prefixes are the view's prefixes the renderer reads.
var prefixes = []string{store.ObjectsPrefix, store.BindingsPrefix, store.ClustersPrefix, store.RolloutsPrefix}

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
	// paced is the revision of each work key a rollout paces (rollout.go).
	paced map[string]string

	// rollouts publishes the paced keys' revisions (Rollout).
	rollouts *rollouts
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
		remotes: newRemoteRenders(), paced: map[string]string{}, rollouts: newRollouts()}
}

// Run follows the view and keeps the works current until ctx ends, then
// returns nil once the renders it started off the loop have stopped. Each
// full batch of the view (its first list, a list after its watch failed)
// is loaded as a fresh list: published only once it is complete and the
// store verified; a list that cannot be verified is tried again after
// view.RelistBackoff, the published works staying as they are meanwhile.
func (r *Renderer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer r.remotes.wait()
	defer cancel()
	sub := r.src.Subscribe(prefixes...)
	defer sub.Close()
	if c := r.cfg.Customizations; c != nil {
		// Subscribed before the first list: a change the list's render
		// did not see yet is handed over after it.
		cs := c.Subscribe()
		defer cs.Close()
		r.reinterpreted = cs
		select {
		case <-c.Synced():
		case <-ctx.Done():
			return nil
		}
	}
	return r.follow(ctx, sub)
}

// follow loads the view's full batches, applies its other batches and
// renders, until ctx ends. Until a full batch has loaded, nothing else is
// done: no render is retried or committed over inputs not yet published.
func (r *Renderer) follow(ctx context.Context, sub *view.Subscription) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var last int64
	var relist <-chan time.Time // a failed load lists again when it fires
	loaded := false
	for {
		var retries <-chan time.Time
		var reinterpreted <-chan struct{}
		var results chan *plan
		if loaded {
			r.armRetry(timer)
			retries, reinterpreted, results = timer.C, r.reinterpreted.Ready(), r.remotes.results
		}
		select {
		case <-ctx.Done():
			return nil
		case <-relist:
			relist = nil
			sub.Relist()
			continue
		case <-sub.Ready():
			holdFault(ctx)
			b := sub.Take()
			if b.Full {
				if loaded = r.loaded(ctx, b); !loaded {
					relist = time.After(view.RelistBackoff)
				}
				continue
			}
			if !loaded {
				continue // the next full batch has them
			}
			for _, c := range b.Changes {
				r.apply(c)
			}
			last = b.Revision
		case <-retries:
			r.dueRetries()
		case <-reinterpreted:
			r.in.markScope(r.reinterpreted.Take())
		case p := <-results:
			r.remoteDone(ctx, p)
		}
		r.state.stamp = max(r.state.stamp, last)
		r.flush(ctx)
		r.published(last)
	}
}

// loaded loads b and reports whether it did; a load that failed is
// logged, to be listed again after view.RelistBackoff.
func (r *Renderer) loaded(ctx context.Context, b view.Batch) bool {
	err := r.load(ctx, b)
	if err != nil && ctx.Err() == nil {
		r.log.Warn("list not published, listing again", "error", err, "backoff", view.RelistBackoff)
	}
	return err == nil
}

// published records that every store change up to rev is published.
func (r *Renderer) published(rev int64) {
	if rev > r.applied.Load() {
		r.applied.Store(rev)
	}
}

// load replaces the inputs with a full batch of the view, marks every
// work (those published before included, so that what is gone is
// removed) and publishes.
func (r *Renderer) load(ctx context.Context, b view.Batch) error {
	r.in = newInputs()
	r.bad = map[string]bool{}
	r.in.loading = true
	for _, c := range b.Changes {
		r.apply(c)
	}
	if v, ok := r.cfg.Authority.(verifier); ok {
		// A list may come from a store replaced or restored under the
		// running hub: check before its smaller contents remove works
		// (publishing them, below).
		if err := v.Verify(ctx); err != nil {
			return fmt.Errorf("verify the store before publishing its list: %w", err)
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
	r.state.stamp = max(r.state.stamp, b.Revision)
	r.flush(ctx)
	r.published(b.Revision)
	r.log.Debug("loaded", "revision", b.Revision, "templates", len(r.in.templates), "bindings", len(r.in.bindings), "clusters", len(r.in.clusters))
	return nil
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

// apply records one stored change. An object that does not decode, or
// whose apply panicked, is unknown: it keeps its last good value (none,
// during a list), its works keep what they have (inputs.broken: keepPlan)
// and the renderer is not authoritative (bad) until it applies cleanly.
// Both are logged and counted.
func (r *Renderer) apply(c view.Change) {
	err := guard.Do(r.log, r.cfg.Counts, "render", c.Key, func() error {
		applyFault(c.Key)
		return r.in.apply(c)
	})
	switch {
	case err == nil:
		delete(r.bad, c.Key)
	case errors.Is(err, guard.ErrPanicked):
		r.log.Error("applying a stored object panicked; it is unknown: its works keep what they have and agents are told the hub's view is not authoritative", "key", c.Key)
		r.in.broken[c.Key] = true
		r.bad[c.Key] = true
	default:
		r.cfg.Counts.Add("render", guard.KindDecode)
		r.log.Error("stored object does not decode; its last good value is kept and agents are told the hub's view is not authoritative", "key", c.Key, "error", err)
		r.bad[c.Key] = true
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
	r.notePacing(plans)
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
