package detector

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/backoff"
	"github.com/tetherproj/tether/internal/interpreter"
)

// Tuned intervals.
const (
	// retryBase is the first retry delay of a template whose reconcile
	// failed (interpreter or store error); it doubles per failure up to
	// retryMax.
	retryBase = 500 * time.Millisecond
	// retryMax caps the retry delay of a failing template.
	retryMax = 30 * time.Second
	// conflictRetries is how many times one reconcile re-reads the binding
	// and tries again after an optimistic-write conflict before it is
	// retried later like any failure.
	conflictRetries = 5
)

// errRelisted ends a session whose view listed again: the next session
// loads the view's next full batch.
var errRelisted = errors.New("detector: the view listed again")

// Source is the replica's view of the store (*view.View).
type Source interface {
	Subscribe(prefixes ...string) *view.Subscription
}

// Option configures a Detector.
type Option func(*Detector)

// WithPreemption turns `preemption: Always` on or off. Tether's default is
// on: the field is already an explicit opt-in per policy (default Never),
// so honouring it is what its author asked for. Off is Karmada's default
// (feature gate PolicyPreemption).
func WithPreemption(on bool) Option { return func(d *Detector) { d.preemption = on } }

// WithSkippedNamespaces replaces DefaultSkippedNamespaces: regular
// expressions, each anchored as ^re$, of namespaces whose templates are
// never propagated. Reserved namespaces are skipped regardless.
func WithSkippedNamespaces(patterns ...string) Option {
	return func(d *Detector) { d.skipped = patterns }
}

// WithCounts counts undecodable objects and recovered panics in c.
func WithCounts(c *guard.Counts) Option { return func(d *Detector) { d.counts = c } }

// Customizations is what the detector needs from hub/customizations.
type Customizations interface {
	Subscribe() *customizations.Subscription
	Synced() <-chan struct{}
}

// WithCustomizations reconciles again the templates of the kinds a
// changed, created or deleted interpreter customization or webhook
// configuration concerns (hub/customizations' Watcher), so that their
// replicas, requirements and dependencies follow it; Run reconciles
// nothing before the stored ones are loaded. Without it templates are
// interpreted again only when they or their policies change.
func WithCustomizations(c Customizations) Option { return func(d *Detector) { d.customizations = c } }

// Detector writes bindings for templates. Its state belongs to the
// goroutine running Run; call Run once at a time.
type Detector struct {
	store      *store.Store // writes (fenced) and reads of dependencies
	view       Source       // templates, policies and bindings, decoded once
	interp     bind.Interpreter
	log        hclog.Logger
	preemption bool
	// namespaces turns namespace auto-propagation on (namespaces.go).
	namespaces bool
	skipped    []string
	filter     *bind.Filter
	filterErr  error
	counts     *guard.Counts // nil counts nothing
	// customizations, if set, is subscribed to while Run runs; reinterpreted
	// is that subscription (nil otherwise: never ready).
	customizations Customizations
	reinterpreted  *customizations.Subscription

	// loading is true while load fills the index: policy events then skip
	// marking their templates, since every template is marked afterwards.
	loading bool
	idx     *index
	dirty   map[store.ObjectRef]bind.Cause
	retries map[store.ObjectRef]retry
	// pending are the templates whose reconcile waits for a webhook's
	// answer (interpreter.ErrPending), marked again when one arrives.
	pending map[store.ObjectRef]bind.Cause
	// inflight are the session's binding writes in flight; conflicts
	// counts the write conflicts of each template whose write finishOne
	// retries.
	inflight  *writes
	conflicts map[store.ObjectRef]int
	// reconciled, if set, is called with each template reconciled (tests).
	reconciled func(store.ObjectRef)
}

// deferring is an Interpreter that answers webhook calls in the
// background (interpreter.Deferred): its calls fail with
// interpreter.ErrPending until the answer is there, and Ready is
// signalled when one arrives. With it, a slow or hung webhook holds only
// the templates it interprets, not the detector's loop.
type deferring interface {
	Ready() <-chan struct{}
}

// answered is signalled when a pending webhook answer arrives; nil (never
// ready) without a deferring Interpreter.
func (d *Detector) answered() <-chan struct{} {
	if df, ok := d.interp.(deferring); ok {
		return df.Ready()
	}
	return nil
}

// markPending marks the templates waiting for a webhook's answer.
func (d *Detector) markPending() {
	for ref, cause := range d.pending {
		d.mark(ref, cause)
	}
	d.pending = map[store.ObjectRef]bind.Cause{}
}

// retry is a template waiting to be reconciled again after a failure.
type retry struct {
	at       time.Time
	failures int
	cause    bind.Cause
}

// New returns a detector that reads v, writes st and interprets templates
// with interp.
func New(st *store.Store, v Source, interp bind.Interpreter, logger hclog.Logger, opts ...Option) *Detector {
	d := &Detector{store: st, view: v, interp: interp, log: logger.Named("detector"), preemption: true, namespaces: true, skipped: bind.DefaultSkippedNamespaces}
	for _, o := range opts {
		o(d)
	}
	d.filter, d.filterErr = bind.NewFilter(d.skipped)
	return d
}

// Run follows the replica's view of the store and keeps bindings in line
// with templates and policies until ctx ends, then returns nil. Each full
// batch of the view (its first list, a list after its watch failed) loads
// the index anew. It returns an error only for a bad configuration.
func (d *Detector) Run(ctx context.Context) error {
	if d.filterErr != nil {
		return d.filterErr
	}
	if d.customizations != nil {
		// Subscribed before the first list: a change the list's reconcile
		// did not see yet is handed over after it.
		sub := d.customizations.Subscribe()
		defer sub.Close()
		d.reinterpreted = sub
		select {
		case <-d.customizations.Synced():
		case <-ctx.Done():
			return nil
		}
	}
	sub := d.view.Subscribe(store.ObjectsPrefix, store.BindingsPrefix)
	defer sub.Close()
	for {
		err := d.session(ctx, sub)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errRelisted) {
			continue
		}
		d.log.Warn("session ended, listing again", "error", err, "backoff", view.RelistBackoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(view.RelistBackoff):
		}
		sub.Relist()
	}
}

// session loads the index from the view's next full batch, then applies
// its changes and reconciles until ctx ends or the view lists again. The
// session's binding writes have finished when it returns.
func (d *Detector) session(ctx context.Context, sub *view.Subscription) error {
	b, ok := sub.WaitFull(ctx)
	if !ok {
		return ctx.Err()
	}
	d.load(ctx, b)
	d.inflight = newWrites()
	defer d.inflight.wg.Wait() // what they wrote, the next session sees
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d.process(ctx)
		d.armRetry(timer)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sub.Ready():
			b := sub.Take()
			if b.Full {
				sub.Relist() // for the next session, once these writes end
				return errRelisted
			}
			for _, c := range b.Changes {
				d.applyGuarded(c, b.Revision)
			}
		case <-timer.C:
			d.dueRetries(time.Now())
		case <-d.reinterpreted.Ready():
			d.markScope(d.reinterpreted.Take())
		case <-d.answered():
			d.markPending()
		case pw := <-d.inflight.done:
			d.finishOne(ctx, pw)
			d.finishReady(ctx)
		}
	}
}

// load replaces the index with a full batch of the view (objects, then
// bindings, each in key order) and marks everything for reconciling.
func (d *Detector) load(ctx context.Context, b view.Batch) {
	d.idx = newIndex()
	d.dirty = map[store.ObjectRef]bind.Cause{}
	d.retries = map[store.ObjectRef]retry{}
	d.conflicts = map[store.ObjectRef]int{}
	d.pending = map[store.ObjectRef]bind.Cause{}
	d.loading = true
	slices.SortFunc(b.Changes, func(x, y view.Change) int { return strings.Compare(x.Key, y.Key) })
	for _, prefix := range []string{store.ObjectsPrefix, store.BindingsPrefix} {
		for _, c := range b.Changes {
			if strings.HasPrefix(c.Key, prefix) {
				d.applyGuarded(c, b.Revision)
			}
		}
	}
	d.loading = false
	for ref := range d.idx.templates {
		d.mark(ref, bind.Cause{})
	}
	for ref := range d.idx.broken.templates {
		d.mark(ref, bind.Cause{}) // undecodable since before the start: report it
	}
	// Resolve every parent's dependencies before reconciling anything, or a
	// dependency reconciled before its parent would look unneeded.
	for ref := range d.idx.bindings {
		if err := d.refreshDeps(ctx, ref); err != nil {
			d.failed(ref, bind.Cause{}, err)
		}
	}
	d.log.Debug("index loaded", "templates", len(d.idx.templates), "policies", len(d.idx.policies),
		"bindings", len(d.idx.bindings), "revision", b.Revision)
}

// applyGuarded applies one change of the view, as of revision rev; a
// panic on it is logged, counted and the change skipped (the index keeps
// what it had for that key).
func (d *Detector) applyGuarded(c view.Change, rev int64) {
	_ = guard.Do(d.log, d.counts, "detector", c.Key, func() error {
		d.apply(c, rev)
		return nil
	})
}

// armRetry sets timer to the earliest pending retry.
func (d *Detector) armRetry(timer *time.Timer) {
	var next time.Time
	for _, r := range d.retries {
		if next.IsZero() || r.at.Before(next) {
			next = r.at
		}
	}
	timer.Stop()
	if !next.IsZero() {
		timer.Reset(time.Until(next))
	}
}

// markScope marks the templates whose kind sc matches: the interpreter's
// customizations for that kind changed. Reconciling one also refreshes its
// dependencies.
func (d *Detector) markScope(sc customizations.Scope) {
	if sc.Empty() {
		return
	}
	for ref, t := range d.idx.templates {
		if sc.Matches(t.Obj.GroupVersionKind()) {
			d.mark(ref, bind.Cause{})
		}
	}
}

// dueRetries marks the retries that are due.
func (d *Detector) dueRetries(now time.Time) {
	for ref, r := range d.retries {
		if !r.at.After(now) {
			d.mark(ref, r.cause)
		}
	}
}

// failed schedules ref for another try: when the webhook answer it waits
// for arrives, or after a backoff.
func (d *Detector) failed(ref store.ObjectRef, cause bind.Cause, err error) {
	if errors.Is(err, interpreter.ErrPending) {
		d.pending[ref] = mergeCause(d.pending[ref], cause)
		return
	}
	r := d.retries[ref]
	r.failures++
	delay := backoff.Policy{Base: retryBase, Max: retryMax}.Step(r.failures - 1)
	r.at, r.cause = time.Now().Add(delay), mergeCause(r.cause, cause)
	d.retries[ref] = r
	d.log.Warn("reconcile failed, will retry", "template", refString(ref), "error", err, "retry_in", delay)
}
