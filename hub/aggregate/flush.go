package aggregate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

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

// flushAll writes every dirty binding whose aggregated status changed. A
// binding that could not be written stays dirty for the next interval.
func (a *Aggregator) flushAll(ctx context.Context) {
	keys := make([]string, 0, len(a.run.dirty))
	for k := range a.run.dirty {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		delete(a.run.dirty, key)
		err := guard.Do(a.log, a.cfg.Counts, "aggregate", key, func() error { return a.flush(ctx, key) })
		if errors.Is(err, guard.ErrPanicked) {
			continue // logged and counted; the binding's next change tries again
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("aggregated status not written, retrying", "binding", key, "error", err)
			a.run.dirty[key] = true
		}
	}
	a.run.passes.Add(1)
}

// flush writes one binding's aggregated status if it changed, with
// optimistic concurrency.
func (a *Aggregator) flush(ctx context.Context, key string) error {
	for range conflictRetries {
		e, ok := a.run.bindings[key]
		if !ok {
			return nil
		}
		nb := a.desired(ctx, key, e.b)
		enc := jsonString(nb)
		if enc == e.enc {
			return nil
		}
		rev, err := a.store.Update(ctx, key, []byte(enc), e.rev)
		if err == nil {
			a.run.bindings[key] = &entry{b: nb, enc: enc, rev: rev}
			a.run.writes.Add(1)
			a.log.Debug("aggregated status written", "binding", key, "items", len(nb.Status.AggregatedStatus), "stale", fold.StaleClusters(nb))
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		if err := a.reread(ctx, key); err != nil {
			return err
		}
	}
	return errors.New("too many write conflicts")
}

// desired is the binding with its aggregated status brought up to date.
// An interpreter or template failure keeps the previous template status.
func (a *Aggregator) desired(ctx context.Context, key string, b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
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
	prev, _ := fold.TemplateStatus(b)
	ts, err := a.aggregateTemplate(ctx, key, prev, items)
	if errors.Is(err, interpreter.ErrPending) {
		// A webhook is asked in the background (interpreter.Deferred):
		// the flush after its answer takes it.
		a.run.pending[key] = true
		return nb
	}
	if err != nil {
		a.log.Warn("template status not aggregated, keeping the previous one", "binding", key, "error", err)
		return nb
	}
	if ts == nil {
		delete(nb.Annotations, fold.AnnotationTemplateStatus)
		return nb
	}
	if nb.Annotations == nil {
		nb.Annotations = map[string]string{}
	}
	nb.Annotations[fold.AnnotationTemplateStatus] = string(ts)
	return nb
}

// aggregateTemplate reads the binding's template and aggregates the items
// onto it.
func (a *Aggregator) aggregateTemplate(ctx context.Context, key string, prev json.RawMessage, items []configv1alpha1.AggregatedStatusItem) (json.RawMessage, error) {
	ref, ok := store.ParseObjectKey(key)
	if !ok {
		return nil, fmt.Errorf("binding key %q has no template", key)
	}
	kv, err := a.store.Get(ctx, store.ObjectKey(ref))
	if err != nil {
		return nil, err
	}
	tmpl := &unstructured.Unstructured{}
	if err := tmpl.UnmarshalJSON(kv.Value); err != nil {
		return nil, fmt.Errorf("decode template %s: %w", kv.Key, err)
	}
	return fold.Template(ctx, a.interp, tmpl, prev, items)
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

// reread refreshes the cached binding from the store.
func (a *Aggregator) reread(ctx context.Context, key string) error {
	kv, err := a.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		delete(a.run.bindings, key)
		return nil
	}
	if err != nil {
		return err
	}
	b := &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(kv.Value, b); err != nil {
		return fmt.Errorf("decode binding %s: %w", key, err)
	}
	if cur, ok := a.run.bindings[key]; ok {
		a.noteAssignments(key, cur.b, b)
	}
	a.run.bindings[key] = &entry{b: b, enc: jsonString(b), rev: kv.Revision}
	return nil
}

func jsonString(v any) string { return string(must(json.Marshal(v))) }

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
	return out
}
