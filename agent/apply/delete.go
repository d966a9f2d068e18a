package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Delete removes w's objects per r and stops holding w: DELETE deletes the
// objects that carry w's ownership label (in the reverse of apply order,
// with background propagation so a Job's pods go too); ORPHAN leaves them
// and strips Tether's labels and annotations. Objects that are gone, or
// that Tether does not own for w, are left alone. A Namespace or CRD is
// deleted only when its template was deleted, and a Namespace then only
// when it holds nothing w does not own; otherwise it is orphaned. Every
// object deleted or orphaned is logged and counted with r.
func (a *Applier) Delete(ctx context.Context, w state.Work, r state.Removal) error {
	defer a.lock(w.Key)()
	rel := release{
		key: w.Key, policy: r.Policy, cause: reasonLabel(r.Reason), evicted: r.Evicted,
		containers: r.Reason == agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED,
		log:        a.logger.With("hub_identity", r.Hub, "work", w.Key, "version", w.Version, "reason", reasonLabel(r.Reason)),
	}
	ms := applyOrder(decode(w.Manifests))
	var errs []error
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.obj == nil {
			continue
		}
		mp, err := a.mapper.mapping(ctx, m.obj.GroupVersionKind())
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // the kind is gone, and its objects with it
			}
			errs = append(errs, err)
			continue
		}
		desired := m.obj.DeepCopy()
		ri := a.resource(mp.Resource, mp.Scope.Name() == meta.RESTScopeNameNamespace, desired)
		if err := a.release(ctx, mp.Resource, ri, desired, rel); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", describe(m.identity()), err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("delete work %s: %w", w.Key, errors.Join(errs...))
	}
	a.mu.Lock()
	delete(a.held, w.Key)
	delete(a.locks, w.Key)
	a.mu.Unlock()
	a.changes.add(w.Key)
	return nil
}

// release is how the objects of one removal are released.
type release struct {
	key    string // the work key
	policy agentv1.DeletionPolicy
	// cause is the reason label: the removal's reason, or causePruned.
	cause   string
	evicted bool // an eviction after the grace period
	// containers is true when Namespaces and CRDs may be deleted (their
	// template was deleted); otherwise they are orphaned.
	containers bool
	log        hclog.Logger // with the hub, work, version and reason
}

// release deletes or orphans one object if it carries the work's
// ownership label. The object is the drift informer's copy when that holds
// it as the work's, else read from the API server; the deletion of a
// cached copy is conditional on its resourceVersion as well as its UID,
// and one that finds the copy was behind is tried again from a fresh read.
func (a *Applier) release(ctx context.Context, gvr schema.GroupVersionResource, ri dynamic.ResourceInterface, desired *unstructured.Unstructured, rel release) error {
	err := a.releaseOnce(ctx, gvr, ri, desired, rel, false)
	if errors.Is(err, errStaleCopy) {
		err = a.releaseOnce(ctx, gvr, ri, desired, rel, true)
	}
	return err
}

// errStaleCopy is a deletion of a cached copy that found the object
// changed since.
var errStaleCopy = errors.New("the cached copy was behind")

func (a *Applier) releaseOnce(ctx context.Context, gvr schema.GroupVersionResource, ri dynamic.ResourceInterface, desired *unstructured.Unstructured, rel release, fresh bool) error {
	name := desired.GetName()
	obj, cached, err := a.current(ctx, gvr, ri, desired, rel.key, fresh)
	if obj == nil || err != nil {
		return err
	}
	if ownerOf(obj, rel.key) != ownerUs {
		return nil
	}
	rule := a.keep(ctx, obj, rel)
	if rule != "" {
		if err := orphan(ctx, ri, name); err != nil {
			return err
		}
		a.metrics.orphans.WithLabelValues(rel.cause, rule).Inc()
		rel.log.Info("object orphaned in the member cluster: Tether's marks removed, the object kept", "object", objectName(obj), "rule", rule)
		return nil
	}
	background := metav1.DeletePropagationBackground
	uid := obj.GetUID()
	pre := metav1.Preconditions{UID: &uid}
	if cached {
		rv := obj.GetResourceVersion()
		pre.ResourceVersion = &rv
	}
	err = ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &pre})
	if apierrors.IsConflict(err) && cached {
		return errStaleCopy
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by an object that is not ours
	}
	if err != nil {
		return err
	}
	if rel.evicted {
		a.metrics.evictions.Inc()
	} else {
		a.metrics.deletes.WithLabelValues(rel.cause).Inc()
	}
	rel.log.Info("object deleted in the member cluster", "object", objectName(obj), "uid", uid, "evicted", rel.evicted)
	return nil
}

// keep returns the rule by which obj is orphaned instead of deleted, or
// "" to delete it.
func (a *Applier) keep(ctx context.Context, obj *unstructured.Unstructured, rel release) string {
	if rel.policy == agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN {
		return rulePolicy
	}
	gk := obj.GroupVersionKind().GroupKind()
	if gk != crdGK && gk != namespaceGK {
		return ""
	}
	if !rel.containers {
		return ruleContainer
	}
	if gk == namespaceGK {
		foreign, err := a.foreign(ctx, obj.GetName(), rel.key)
		if err != nil {
			rel.log.Warn("namespace kept: its content could not be listed", "namespace", obj.GetName(), "error", err)
			return ruleNotEmpty
		}
		if foreign != "" {
			rel.log.Info("namespace kept: it holds an object the work does not own", "namespace", obj.GetName(), "foreign_object", foreign)
			return ruleNotEmpty
		}
	}
	return ""
}

// orphan removes Tether's ownership labels and annotations with a merge
// patch (null deletes a key), leaving everything else as it is.
func orphan(ctx context.Context, ri dynamic.ResourceInterface, name string) error {
	patch := map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{LabelWorkKey: nil, LabelBindingUID: nil},
		"annotations": map[string]any{AnnotationWorkKey: nil, AnnotationWorkVersion: nil, AnnotationBinding: nil},
	}}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// prune releases, per w's deletion policy, the objects an older version of
// w applied that the new version no longer has (Namespaces and CRDs are
// orphaned). Failures are logged: the objects stay, labelled, and a later
// version or Delete retries.
func (a *Applier) prune(ctx context.Context, w state.Work, before, after []object) {
	keep := map[objectKey]bool{}
	for _, o := range after {
		keep[keyOf(o)] = true
	}
	rel := release{key: w.Key, policy: w.DeletionPolicy(), cause: causePruned,
		log: a.logger.With("work", w.Key, "version", w.Version, "reason", causePruned)}
	for _, o := range before {
		if o.gvr.Resource == "" || keep[keyOf(o)] {
			continue
		}
		ri := dynamic.ResourceInterface(a.dyn.Resource(o.gvr))
		desired := &unstructured.Unstructured{}
		desired.SetName(o.id.GetName())
		if o.namespaced {
			ri = a.dyn.Resource(o.gvr).Namespace(o.id.GetNamespace())
			desired.SetNamespace(o.id.GetNamespace())
		}
		if err := a.release(ctx, o.gvr, ri, desired, rel); err != nil {
			a.logger.Warn("object dropped from work not removed", "work", w.Key, "object", describe(o.id), "error", err)
		}
	}
}

// objectKey identifies an object in the cluster.
type objectKey struct {
	resource        string
	group           string
	namespace, name string
}

func keyOf(o object) objectKey {
	return objectKey{resource: o.gvr.Resource, group: o.gvr.Group, namespace: o.id.GetNamespace(), name: o.id.GetName()}
}
