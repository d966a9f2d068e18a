package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Delete removes w's objects per policy and stops holding w: DELETE
// deletes the objects that carry w's ownership label (in the reverse of
// apply order, with background propagation so a Job's pods go too);
// ORPHAN leaves them and strips Tether's labels and annotations. Objects
// that are gone, or that Tether does not own for w, are left alone.
func (a *Applier) Delete(ctx context.Context, w state.Work, policy agentv1.DeletionPolicy) error {
	defer a.lock(w.Key)()
	ms := applyOrder(decode(w.Manifests))
	var errs []error
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.obj == nil {
			continue
		}
		mp, err := a.mapper.mapping(m.obj.GroupVersionKind())
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue // the kind is gone, and its objects with it
			}
			errs = append(errs, err)
			continue
		}
		desired := m.obj.DeepCopy()
		ri := a.resource(mp.Resource, mp.Scope.Name() == meta.RESTScopeNameNamespace, desired)
		if err := a.release(ctx, ri, w.Key, desired.GetName(), policy); err != nil {
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

// release deletes or orphans one object if it carries key's ownership
// label.
func (a *Applier) release(ctx context.Context, ri dynamic.ResourceInterface, key, name string, policy agentv1.DeletionPolicy) error {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ownerOf(obj, key) != ownerUs {
		return nil
	}
	if policy == agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN {
		return orphan(ctx, ri, name)
	}
	background := metav1.DeletePropagationBackground
	uid := obj.GetUID()
	err = ri.Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: &background,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by an object that is not ours
	}
	return err
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
// w applied that the new version no longer has. Failures are logged: the
// objects stay, labelled, and a later version or Delete retries.
func (a *Applier) prune(ctx context.Context, w state.Work, before, after []object) {
	keep := map[objectKey]bool{}
	for _, o := range after {
		keep[keyOf(o)] = true
	}
	for _, o := range before {
		if o.gvr.Resource == "" || keep[keyOf(o)] {
			continue
		}
		ri := dynamic.ResourceInterface(a.dyn.Resource(o.gvr))
		if o.namespaced {
			ri = a.dyn.Resource(o.gvr).Namespace(o.id.GetNamespace())
		}
		if err := a.release(ctx, ri, w.Key, o.id.GetName(), w.DeletionPolicy()); err != nil {
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
