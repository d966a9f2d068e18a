package aggregate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
)

// conflictRetries is how many times one flush re-reads a binding after an
// optimistic-write conflict before it waits for the next interval.
const conflictRetries = 5

// flushWorkers is how many bindings one flush pass reads templates for and
// writes at once. etcd commits concurrent writes together (one fsync for
// many), so a pass over the hundred bindings a rollout dirties takes a few
// round trips instead of one read and one write per binding in turn, and
// a status waits for one pass, not for several of them.
const flushWorkers = 16

// flushJob is one dirty binding of a flush pass: prepared by the Run
// goroutine, completed (template status, write) by a worker, finished by
// Run again.
type flushJob struct {
	key  string
	e    *entry
	nb   *workv1alpha1.ResourceBinding // the binding as desired
	prev json.RawMessage               // the template status written before
	// Set by the worker.
	enc      encoding
	pending  bool  // a webhook's answer is awaited (interpreter.ErrPending)
	written  bool  // nb was written at rev
	rev      int64 // the binding's revision after the write
	err      error
	panicked bool
}

// flushBytesPerInterval spaces the writes of large bindings: a binding
// is written at most once per flush interval for every flushBytesPerInterval
// bytes of its encoding (a Deployment placed on three clusters, a few
// KiB, at every interval; one placed on 1,000 clusters, about 150 KiB,
// at most every 9 intervals). Every write of a binding goes through etcd
// to every replica's view (hub/view), which decodes it, so a status write
// costs in proportion to the binding's size.
const flushBytesPerInterval = 16 << 10

// flushAll writes every dirty binding whose aggregated status changed,
// flushWorkers at a time, but a large binding only when its spacing
// (flushSpacing) has passed since its last write, and no more of them
// than flushBytesPerPass allows (withinBudget): the others stay dirty
// until then. A binding that could not be written stays dirty for the next
// interval; one whose write conflicted is read again and written at once
// (flush).
func (a *Aggregator) flushAll(ctx context.Context) {
	keys := make([]string, 0, len(a.run.dirty))
	for k := range a.run.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	now := a.now()
	a.run.passAt = now
	var due []dueBinding
	for _, key := range keys {
		e := a.run.bindings[key]
		if e != nil && now.Sub(e.written) < a.flushSpacing(e) {
			continue
		}
		d := dueBinding{key: key}
		if e != nil {
			d.size, d.written = e.size, e.written
		}
		due = append(due, d)
	}
	keys = withinBudget(due, flushBytesPerPass)
	jobs := make([]*flushJob, 0, len(keys))
	for _, key := range keys {
		delete(a.run.dirty, key)
		var j *flushJob
		err := guard.Do(a.log, a.cfg.Counts, "aggregate", key, func() error { j = a.prepareFlush(ctx, key); return nil })
		if err == nil && j != nil {
			jobs = append(jobs, j)
		}
	}
	a.complete(ctx, jobs)
	for _, j := range jobs {
		a.finish(ctx, j)
	}
	a.run.passes.Add(1)
}

// flushBytesPerPass bounds what one flush pass writes: the bindings due
// are written longest unwritten first until their encodings add up to 1
// MiB (5 MiB/s at the default interval); the rest wait for the next
// pass. The spacing alone let a thousand bindings of a thousand clusters
// each (150 KiB) ask for 80 MB/s of writes, each decoded again by every
// binding watcher the hub then had, and every other write of the hub (an
// Apply, the detector's and scheduler's bindings) waited behind them in
// etcd. At 2 MiB a pass, such writes on their way through etcd to the
// four binding watchers were some 150 MB of the hub's live heap while a
// million works were acked (make load-million); at 1 MiB a round over
// those thousand bindings takes 30 s. Bindings of a few clusters, a few KiB each, are
// written at every pass either way.
const flushBytesPerPass = 1 << 20

// dueBinding is a dirty binding whose spacing has passed: its key, the
// size of its last encoding and when it was last written.
type dueBinding struct {
	key     string
	size    int
	written time.Time
}

// withinBudget picks from due what one pass writes: longest unwritten
// first (never written first of all), until the sizes add up to budget;
// the first is always taken. The keys are returned sorted.
func withinBudget(due []dueBinding, budget int) []string {
	sort.SliceStable(due, func(i, j int) bool { return due[i].written.Before(due[j].written) })
	var keys []string
	total := 0
	for i, d := range due {
		if i > 0 && total+d.size > budget {
			break
		}
		total += d.size
		keys = append(keys, d.key)
	}
	sort.Strings(keys)
	return keys
}

// flushSpacing is the least time between two writes of e beyond the
// flush interval's own: zero under flushBytesPerInterval.
func (a *Aggregator) flushSpacing(e *entry) time.Duration {
	return a.cfg.FlushInterval * time.Duration(e.size/flushBytesPerInterval)
}

// prepareFlush is key's job with its items brought up to date; nil when the
// binding is gone or could not be read (then it stays dirty). A binding
// whose stored encoding is not known, or which has items kept as written,
// is read whole from the store first (fetch).
func (a *Aggregator) prepareFlush(ctx context.Context, key string) *flushJob {
	e, ok := a.run.bindings[key]
	if !ok {
		return nil
	}
	base := e.b
	if !e.known || e.keeps {
		full, err := a.fetch(ctx, key)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("binding not read, retrying", "binding", key, "error", err)
				a.run.dirty[key] = true
			}
			return nil
		}
		if full == nil {
			return nil
		}
		e, base = a.run.bindings[key], full
	}
	prev, _ := fold.TemplateStatus(base)
	return &flushJob{key: key, e: e, nb: a.withItems(key, base), prev: prev}
}

// complete runs the jobs' template statuses and writes, flushWorkers at
// a time, and returns once all are done. The workers touch no run state;
// each job keeps its own outcome, so the group's error is always nil.
func (a *Aggregator) complete(ctx context.Context, jobs []*flushJob) {
	var g errgroup.Group
	g.SetLimit(flushWorkers)
	for _, j := range jobs {
		g.Go(func() error {
			err := guard.Do(a.log, a.cfg.Counts, "aggregate", j.key, func() error { a.write(ctx, j); return nil })
			j.panicked = errors.Is(err, guard.ErrPanicked)
			return nil
		})
	}
	_ = g.Wait()
}

// write completes j's template status and writes j.nb if it changed.
func (a *Aggregator) write(ctx context.Context, j *flushJob) {
	j.pending = a.withTemplate(ctx, j.key, j.nb, j.prev)
	var data []byte
	if data, j.enc = encodeBounded(j.nb); j.enc == j.e.enc {
		return
	}
	j.rev, j.err = a.store.Update(ctx, j.key, data, j.e.rev)
	j.written = j.err == nil
}

// finish records a completed job in the run state: the binding written, a
// webhook awaited, a conflict flushed again at once, another failure
// retried at the next interval.
func (a *Aggregator) finish(ctx context.Context, j *flushJob) {
	if j.panicked {
		return // logged and counted; the binding's next change tries again
	}
	if j.pending {
		a.run.pending[j.key] = true
	}
	err := j.err
	switch {
	case j.written:
		a.wrote(j.key, j.nb, j.enc, j.rev)
	case errors.Is(err, store.ErrConflict):
		err = guard.Do(a.log, a.cfg.Counts, "aggregate", j.key, func() error { return a.flush(ctx, j.key) })
	}
	if errors.Is(err, guard.ErrPanicked) || err == nil || ctx.Err() != nil {
		return
	}
	a.log.Warn("aggregated status not written, retrying", "binding", j.key, "error", err)
	a.run.dirty[j.key] = true
}

// wrote records the aggregator's own write of a binding, made in the pass
// begun at a.run.passAt.
func (a *Aggregator) wrote(key string, nb *workv1alpha1.ResourceBinding, enc encoding, rev int64) {
	a.run.writes.Add(1)
	a.log.Debug("aggregated status written", "binding", key, "items", len(nb.Status.AggregatedStatus), "stale", fold.StaleClusters(nb))
	a.run.bindings[key] = &entry{b: withoutItems(nb), rev: rev, size: enc.size, enc: enc, known: true,
		keeps: a.keepsItems(key, nb), written: a.run.passAt}
}

// flush writes one binding's aggregated status if it changed, read whole
// from the store, with optimistic concurrency, reading it again after a
// conflict.
func (a *Aggregator) flush(ctx context.Context, key string) error {
	for range conflictRetries {
		full, err := a.fetch(ctx, key)
		if err != nil || full == nil {
			return err
		}
		e := a.run.bindings[key]
		nb := a.desired(ctx, key, full)
		data, enc := encodeBounded(nb)
		if enc == e.enc {
			return nil
		}
		rev, err := a.store.Update(ctx, key, data, e.rev)
		if err == nil {
			a.wrote(key, nb, enc, rev)
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return errors.New("too many write conflicts")
}

// desired is the binding with its aggregated status brought up to date.
// An interpreter or template failure keeps the previous template status.
func (a *Aggregator) desired(ctx context.Context, key string, b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	nb := a.withItems(key, b)
	prev, _ := fold.TemplateStatus(b)
	if a.withTemplate(ctx, key, nb, prev) {
		a.run.pending[key] = true
	}
	return nb
}

// withItems is a copy of b with its per-cluster items and stale clusters
// brought up to date. It reads and updates run state.
func (a *Aggregator) withItems(key string, b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	nb := cloneBinding(b)
	gv, _ := schema.ParseGroupVersion(b.Spec.Resource.APIVersion)
	gvk := gv.WithKind(b.Spec.Resource.Kind)
	obs := a.observations(key)
	items, stale := BuildItems(nb, ItemsInput{
		Observations: obs,
		Stale:        a.stale,
		HealthHook:   a.interp.HookEnabled(gvk, configv1alpha1.InterpreterOperationInterpretHealth),
		Superseded:   a.supersededFor(key, nb, obs),
	})
	nb.Status.AggregatedStatus = items
	setAnnotation(nb, fold.AnnotationStaleClusters, stale)
	return nb
}

// withTemplate aggregates nb's items onto its template and records the
// template status on nb; prev is the one written before, kept when the
// interpreter or the template fails. It reports whether a webhook's answer
// is awaited (the flush after its answer takes it). It touches no run
// state: flush workers call it.
func (a *Aggregator) withTemplate(ctx context.Context, key string, nb *workv1alpha1.ResourceBinding, prev json.RawMessage) (pending bool) {
	ts, err := a.aggregateTemplate(ctx, key, prev, nb.Status.AggregatedStatus)
	if errors.Is(err, interpreter.ErrPending) {
		return true
	}
	if err != nil {
		a.log.Warn("template status not aggregated, keeping the previous one", "binding", key, "error", err)
		return false
	}
	if ts == nil {
		delete(nb.Annotations, fold.AnnotationTemplateStatus)
		return false
	}
	if nb.Annotations == nil {
		nb.Annotations = map[string]string{}
	}
	nb.Annotations[fold.AnnotationTemplateStatus] = string(ts)
	return false
}

// aggregateTemplate reads the binding's template from the view and
// aggregates the items onto a copy of it.
func (a *Aggregator) aggregateTemplate(ctx context.Context, key string, prev json.RawMessage, items []configv1alpha1.AggregatedStatusItem) (json.RawMessage, error) {
	ref, ok := store.ParseObjectKey(key)
	if !ok {
		return nil, fmt.Errorf("binding key %q has no template", key)
	}
	tkey := store.ObjectKey(ref)
	o, ok := a.cfg.View.Get(tkey)
	if !ok {
		return nil, fmt.Errorf("template %s: %w", tkey, store.ErrNotFound)
	}
	if o.Err != nil {
		return nil, o.Err
	}
	tmpl, ok := o.Value.(*unstructured.Unstructured)
	if !ok || tmpl == nil {
		return nil, fmt.Errorf("template %s: not decoded", tkey)
	}
	return fold.Template(ctx, a.interp, tmpl.DeepCopy(), prev, items)
}

// setAnnotation stores v as JSON, or removes the annotation when v is
// empty.
func setAnnotation[T any](b *workv1alpha1.ResourceBinding, key string, v []T) {
	if len(v) == 0 {
		delete(b.Annotations, key)
		return
	}
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Annotations[key] = string(must(json.Marshal(v)))
}

// fetch reads the binding key whole from the store, caches it (cache) and
// returns it with its items; nil when it is gone.
func (a *Aggregator) fetch(ctx context.Context, key string) (*workv1alpha1.ResourceBinding, error) {
	kv, err := a.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		delete(a.run.bindings, key)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := workv1alpha1.Decode(kv.Value)
	if err != nil {
		return nil, fmt.Errorf("decode binding %s: %w", key, err)
	}
	a.cache(key, b, kv.Revision, len(kv.Value))
	return b, nil
}

// encoding stands for a binding's JSON encoding, which is not kept (one
// placed on 1,000 clusters encodes to some 50 KB): its SHA-256, to tell
// whether a binding changed, and its size, for spacing (flushSpacing).
type encoding struct {
	sum  [sha256.Size]byte
	size int
}

// encode returns b's JSON encoding and its encoding value.
func encode(b *workv1alpha1.ResourceBinding) ([]byte, encoding) {
	data := must(json.Marshal(b))
	return data, encoding{sum: sha256.Sum256(data), size: len(data)}
}

func must(data []byte, err error) []byte {
	if err != nil {
		panic(fmt.Sprintf("aggregate: marshal: %v", err))
	}
	return data
}

// cloneBinding deep-copies a binding through its JSON form.
func cloneBinding(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	out := &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(must(json.Marshal(b)), out); err != nil {
		panic(fmt.Sprintf("aggregate: copy binding: %v", err))
	}
	out.InternNames()
	return out
}
