package apply

import (
	"context"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// Snapshot is one held work as the member cluster has it now.
type Snapshot struct {
	// Key and Version are the work's key and the version last applied.
	Key, Version string
	// Objects has one entry per manifest, in manifest order.
	Objects []ObjectState
}

// ObjectState is one manifest's last apply result and the object as
// observed.
type ObjectState struct {
	// Identity names the object (namespace filled in as applied).
	Identity *agentv1.ObjectIdentity
	// Result and Message are the last apply's outcome.
	Result  agentv1.ApplyResult
	Message string
	// Observed is the object in the cluster; nil when absent or when it
	// could not be read (Message then says why).
	Observed *unstructured.Unstructured
}

// Keys returns the keys of the works held, sorted.
func (a *Applier) Keys() []string {
	a.mu.Lock()
	keys := make([]string, 0, len(a.held))
	for k := range a.held {
		keys = append(keys, k)
	}
	a.mu.Unlock()
	sort.Strings(keys)
	return keys
}

// Changes returns the channel of work keys whose objects or apply results
// changed (coalesced per key); it is fed while Run runs. A key whose work
// is no longer held means: forget it (Snapshot returns false).
func (a *Applier) Changes() <-chan string { return a.changes.out }

// Snapshot returns the held work key with each object as observed: from
// the drift informers' caches, or from the API server for objects they do
// not cover (read-only and not-owned objects). ok is false when key is not
// held.
func (a *Applier) Snapshot(ctx context.Context, key string) (Snapshot, bool) {
	a.mu.Lock()
	h := a.held[key]
	a.mu.Unlock()
	if h == nil {
		return Snapshot{}, false
	}
	s := Snapshot{Key: key, Version: h.work.Version, Objects: make([]ObjectState, len(h.objects))}
	for i, o := range h.objects {
		s.Objects[i] = ObjectState{Identity: o.id, Result: o.result, Message: o.message}
		if o.gvr.Resource == "" {
			continue
		}
		obj, err := a.observe(ctx, o)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			s.Objects[i].Message = err.Error()
		default:
			s.Objects[i].Observed = readOnlyView(h.work.Options, obj)
		}
	}
	return s, true
}

// readOnlyView is obj as status reflection sees it. Under READ_ONLY an
// object Tether never wrote lacks the template generation annotation that
// Karmada's status reflection of workloads (Deployment, StatefulSet,
// ReplicaSet, DaemonSet) requires; it gets "0" (no template generation),
// so its status is reported and the template's observedGeneration never
// counts it as current. obj is a copy; nothing is written.
func readOnlyView(o *agentv1.ApplyOptions, obj *unstructured.Unstructured) *unstructured.Unstructured {
	if optionsOf(o).strategy != agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY {
		return obj
	}
	annotations := obj.GetAnnotations()
	if _, ok := annotations[native.GenerationAnnotation]; ok {
		return obj
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[native.GenerationAnnotation] = "0"
	obj.SetAnnotations(annotations)
	return obj
}

// observe reads one applied object, from cache when possible.
func (a *Applier) observe(ctx context.Context, o object) (*unstructured.Unstructured, error) {
	ns := ""
	if o.namespaced {
		ns = o.id.GetNamespace()
	}
	if obj, ok := a.watch.cached(o.gvr, ns, o.id.GetName()); ok {
		return obj.DeepCopy(), nil
	}
	if o.namespaced {
		return a.dyn.Resource(o.gvr).Namespace(ns).Get(ctx, o.id.GetName(), metav1.GetOptions{})
	}
	return a.dyn.Resource(o.gvr).Get(ctx, o.id.GetName(), metav1.GetOptions{})
}

// tracked finds the held work an informer's object belongs to: its key
// (empty when none) and, when the object is one of the work's current
// manifests (ok), the object as Tether last applied it.
func (a *Applier) tracked(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (key string, applied object, ok bool) {
	key = obj.GetAnnotations()[AnnotationWorkKey]
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.held[key]
	if h == nil {
		return key, object{}, false
	}
	for _, o := range h.objects {
		if o.gvr == gvr && o.id.GetName() == obj.GetName() && o.id.GetNamespace() == obj.GetNamespace() {
			return key, o, true
		}
	}
	return key, object{}, false
}
