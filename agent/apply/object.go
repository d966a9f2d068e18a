package apply

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/state"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const (
	resultApplied  = agentv1.ApplyResult_APPLY_RESULT_APPLIED
	resultFailed   = agentv1.ApplyResult_APPLY_RESULT_FAILED
	resultConflict = agentv1.ApplyResult_APPLY_RESULT_CONFLICT
)

// conflictBackoff paces the re-reads after a write lost a race with
// another writer: 6 tries over about 0.6 s (10 ms doubling), enough to
// get between a controller's status updates.
var conflictBackoff = wait.Backoff{Steps: 6, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.1}

// target is one manifest resolved against the cluster.
type target struct {
	w        state.Work
	opts     options
	gvr      schema.GroupVersionResource
	desired  *unstructured.Unstructured
	observed *unstructured.Unstructured // nil when absent
	// cached: observed is the informer's copy, or, when nil, the synced
	// informer holds no object of that name (see basis).
	cached bool
	ri     dynamic.ResourceInterface
}

// applyOne applies one manifest. The error is non-nil only when the
// attempt could not be made (ctx ended, API server unreachable).
func (a *Applier) applyOne(ctx context.Context, w state.Work, opts options, m manifest) (object, error) {
	o := object{id: m.identity()}
	if m.err != nil {
		return o.fail(m.err), nil
	}
	mapping, err := a.mapper.mapping(ctx, m.obj.GroupVersionKind())
	if err != nil {
		return o.fail(err), unreachable(ctx, err)
	}
	o.gvr, o.namespaced = mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace
	t, written, result, err := a.attempt(ctx, w, opts, m, o)
	o.id.Namespace = t.desired.GetNamespace()
	if err := unreachable(ctx, err); err != nil {
		return o, err
	}
	o.result, o.written = result, written
	if result == resultApplied {
		o.labels, o.annotations = appliedMeta(m.obj, w)
	}
	if err != nil {
		o.message = err.Error()
	}
	if result == resultFailed && opts.strategy != agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY {
		a.recordFailure(ctx, t.desired, t.observed, o.message)
	}
	if result == resultApplied && m.obj.GroupVersionKind().GroupKind() == crdGK {
		if err := a.waitEstablished(ctx, o.gvr, t.desired.GetName()); err != nil {
			return o.fail(err), unreachable(ctx, err)
		}
	}
	if o.gvr.Resource != "" && result == resultApplied {
		a.watch.add(o.gvr)
	}
	return o, nil
}

// attempt reads and writes one object. A write based on a stale read
// (another writer came between, or the informer's copy was behind) is
// retried from a fresh read of the API server.
func (a *Applier) attempt(ctx context.Context, w state.Work, opts options, m manifest, o object) (target, mark, agentv1.ApplyResult, error) {
	var t target
	var written mark
	result := resultFailed
	fresh := false
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		t = target{w: w, opts: opts, gvr: o.gvr, desired: m.obj.DeepCopy()}
		t.ri = a.resource(o.gvr, o.namespaced, t.desired)
		var err error
		if t.observed, t.cached, err = a.basis(ctx, t, fresh); err != nil {
			result = resultFailed
			return err
		}
		fresh = true
		written, result, err = a.write(ctx, t)
		return err
	})
	return t, written, result, err
}

// basis returns the object t's write is based on: current's answer or,
// unless fresh or t is read-only, none (cached true) when the synced
// informer holds no object of that name. The member may still have one
// (foreign, or Tether's and not seen by the informer yet), so write then
// only creates: a create, or an apply with absentRV, which fail on any
// object of that name, and the failure is retried from a fresh read. A
// new object costs a write and no GET.
func (a *Applier) basis(ctx context.Context, t target, fresh bool) (*unstructured.Unstructured, bool, error) {
	if !fresh && t.opts.strategy != agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY {
		a.watch.awaitFirstSync(ctx, t.gvr) // a kind's first objects too are known new from the cache
		if a.watch.cachedAbsent(t.gvr, t.desired) {
			return nil, true, nil
		}
	}
	return a.current(ctx, t.gvr, t.ri, t.desired, t.w.Key, fresh)
}

// current returns the object named like desired (its namespace set), nil
// when there is none. Unless fresh, it is the drift informer's copy when
// that holds the object as work key's (the informers hold only objects
// with Tether's label; cached true): a GET less per object for every new
// version or deletion of a work, which the member API server pays for.
// A write or deletion of a cached copy must carry its resourceVersion, so
// that it lands only on the very object seen, as after a GET; one that
// conflicts because the copy was behind asks again with fresh. Any other
// object (new, foreign, another work's) is read from the API server.
func (a *Applier) current(ctx context.Context, gvr schema.GroupVersionResource, ri dynamic.ResourceInterface,
	desired *unstructured.Unstructured, key string, fresh bool) (obj *unstructured.Unstructured, cached bool, err error) {
	if !fresh {
		if obj, ok := a.watch.cachedOwn(gvr, desired, key); ok {
			return obj, true, nil
		}
	}
	obj, err = ri.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return obj, false, err
}

func (o object) fail(err error) object {
	o.result, o.message = resultFailed, err.Error()
	return o
}

// unreachable returns err when it means the attempt could not be made: ctx
// ended or the API server could not be reached.
func unreachable(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("apply: member API server unreachable: %w", err)
	}
	return nil
}

// resource returns the client for obj's resource, fixing obj's namespace:
// "default" for a namespaced object without one, none for a cluster-scoped
// one.
func (a *Applier) resource(gvr schema.GroupVersionResource, namespaced bool, obj *unstructured.Unstructured) dynamic.ResourceInterface {
	if !namespaced {
		obj.SetNamespace("")
		return a.dyn.Resource(gvr)
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(metav1.NamespaceDefault)
	}
	return a.dyn.Resource(gvr).Namespace(obj.GetNamespace())
}

// write applies t per its strategy and returns what the write left (zero
// when nothing was written) and the result.
func (a *Applier) write(ctx context.Context, t target) (mark, agentv1.ApplyResult, error) {
	if t.opts.strategy == agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY {
		if t.observed == nil {
			return mark{}, resultFailed, errors.New("not found (read-only: Tether does not create it)")
		}
		return mark{}, resultApplied, nil
	}
	if t.observed != nil {
		if err := t.conflict(); err != nil {
			return mark{}, resultConflict, err
		}
	}
	stamp(t.desired, t.w.Key, t.w.Version, t.w.Binding)
	var out *unstructured.Unstructured
	var err error
	switch {
	case t.opts.strategy == agentv1.ApplyStrategy_APPLY_STRATEGY_CREATE_ONLY && t.observed != nil:
		return mark{}, resultApplied, nil
	case t.opts.strategy == agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY:
		out, err = a.serverSideApply(ctx, t)
	case t.observed == nil:
		recordManaged(t.desired)
		out, err = t.ri.Create(ctx, t.desired, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			// The object appeared after the read, or the informer had not
			// seen it: a conflict, which attempt retries from a fresh read.
			err = apierrors.NewConflict(t.gvr.GroupResource(), t.desired.GetName(), err)
		}
	default:
		out, err = a.update(ctx, t)
	}
	if err != nil {
		return mark{}, resultFailed, err
	}
	return mark{rv: out.GetResourceVersion(), generation: out.GetGeneration()}, resultApplied, nil
}

// conflict says why t's existing object may not be written: it is foreign
// (or another work's) and the resolution is ABORT.
func (t target) conflict() error {
	if t.opts.conflict == agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE {
		return nil
	}
	switch ownerOf(t.observed, t.w.Key) {
	case ownerNone:
		return errors.New("exists and was not created by Tether (conflict resolution Abort)")
	case ownerOther:
		return fmt.Errorf("exists and belongs to work %q (conflict resolution Abort)", t.observed.GetAnnotations()[AnnotationWorkKey])
	default:
		return nil
	}
}

// retain runs the interpreter's Retain on (desired, observed) when a hook
// exists for the kind, as Karmada's objectwatcher does.
func (a *Applier) retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if observed == nil || !a.retains(desired) {
		return desired, nil
	}
	out, err := a.interp.Retain(ctx, desired, observed)
	if err != nil {
		return nil, fmt.Errorf("retain: %w", customizations.Explain(err))
	}
	return out, nil
}

// retains reports whether the interpreter has a Retain hook for obj's kind.
func (a *Applier) retains(obj *unstructured.Unstructured) bool {
	return a.interp.HookEnabled(obj.GroupVersionKind(), configv1alpha1.InterpreterOperationRetain)
}

// serverSideApply applies Retain(desired, observed) with Tether's field
// manager, forced on objects Tether owns or may overwrite.
func (a *Applier) serverSideApply(ctx context.Context, t target) (*unstructured.Unstructured, error) {
	_, hadStatus := t.desired.Object["status"]
	body, err := a.retain(ctx, t.desired, t.observed)
	if err != nil {
		return nil, err
	}
	clean(body, hadStatus)
	if t.observed != nil && (t.cached || a.retains(body)) {
		// Retain read observed: apply only onto that very version, or an
		// HPA's scale between the read and the apply would be undone; the
		// same for a copy from the cache, which may be behind. A conflict
		// is retried from a fresh read (attempt).
		body.SetResourceVersion(t.observed.GetResourceVersion())
	}
	if t.observed == nil && t.cached {
		// Create only: no object carries absentRV, so the apply conflicts
		// with any object of that name instead of taking it over.
		body.SetResourceVersion(absentRV)
	}
	data, err := body.MarshalJSON()
	if err != nil {
		return nil, err
	}
	force := t.observed != nil && (ownerOf(t.observed, t.w.Key) == ownerUs ||
		t.opts.conflict == agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE)
	return t.ri.Patch(ctx, body.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
}

// absentRV is a resourceVersion no object has: larger than any int64, and
// etcd's revisions, which the API server's resourceVersions are, are
// int64. An apply carrying it creates the object when there is none (the
// API server ignores the resourceVersion of an object it creates) and
// conflicts with any object there is.
const absentRV = "18446744073709551615"

// clean drops what a typed Retain round trip may add and an apply must not
// carry.
func clean(obj *unstructured.Unstructured, keepStatus bool) {
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(obj.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj.Object, "metadata", "uid")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	if !keepStatus {
		delete(obj.Object, "status")
	}
}

// update is Karmada's objectwatcher update: copy the cluster's fields,
// merge labels and annotations, Retain, Update.
func (a *Applier) update(ctx context.Context, t target) (*unstructured.Unstructured, error) {
	recordManaged(t.desired)
	retainClusterFields(t.desired, t.observed)
	body, err := a.retain(ctx, t.desired, t.observed)
	if err != nil {
		return nil, err
	}
	return t.ri.Update(ctx, body, metav1.UpdateOptions{FieldManager: FieldManager})
}
