package bind

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Claim metadata on bindings: Tether's spelling of Karmada's keys. The
// namespace and name are annotations, the permanent ID a label so that a
// policy's bindings can be selected.
const (
	LabelPPPermanentID    = "propagationpolicy.tether.io/permanent-id"
	AnnotationPPNamespace = "propagationpolicy.tether.io/namespace"
	AnnotationPPName      = "propagationpolicy.tether.io/name"
	LabelCPPPermanentID   = "clusterpropagationpolicy.tether.io/permanent-id"
	AnnotationCPPName     = "clusterpropagationpolicy.tether.io/name"
)

// Interpreter is what the detector needs from the resource interpreter.
// The facade in internal/interpreter satisfies it; WithoutContext adapts
// the native interpreter.
type Interpreter interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error)
	GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
}

// ContextFree is an interpreter whose calls take no context, such as
// internal/interpreter/native.Interpreter.
type ContextFree interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	GetReplicas(obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error)
	GetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)
}

// WithoutContext adapts i to Interpreter.
func WithoutContext(i ContextFree) Interpreter { return contextFree{i} }

type contextFree struct{ ContextFree }

func (c contextFree) GetReplicas(_ context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error) {
	return c.ContextFree.GetReplicas(obj)
}

func (c contextFree) GetDependencies(_ context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	return c.ContextFree.GetDependencies(obj)
}

// BindingName is Karmada's binding name for a template: name-kind in lower
// case, with ':' (allowed in RBAC names, not in binding names) turned to '.'.
func BindingName(kind, name string) string {
	return strings.ToLower(strings.ReplaceAll(name, ":", ".") + "-" + kind)
}

// Reference is the binding's reference to template t.
func Reference(t *Template) workv1alpha1.ObjectReference {
	return workv1alpha1.ObjectReference{
		APIVersion:      t.Obj.GetAPIVersion(),
		Kind:            t.Obj.GetKind(),
		Namespace:       t.Obj.GetNamespace(),
		Name:            t.Obj.GetName(),
		UID:             t.Obj.GetUID(),
		ResourceVersion: t.ResourceVersion(),
	}
}

// BuildSpec is the policy part of the binding of t claimed by p: the
// template reference, replicas and requirements from the interpreter (0
// and none for kinds without an InterpretReplica hook), and the policy's
// placement and behaviour. It never sets the scheduler's fields.
func BuildSpec(ctx context.Context, t *Template, p *Policy, interp Interpreter) (workv1alpha1.ResourceBindingSpec, error) {
	spec := workv1alpha1.ResourceBindingSpec{Resource: Reference(t)}
	if interp.HookEnabled(t.Obj.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretReplica) {
		replicas, req, err := interp.GetReplicas(ctx, t.Obj.DeepCopy())
		if err != nil {
			return spec, fmt.Errorf("interpret replicas of %s %s/%s: %w", t.Ref.Kind, t.Ref.Namespace, t.Ref.Name, err)
		}
		spec.Replicas, spec.ReplicaRequirements = replicas, req
	}
	ps, err := copySpec(p.Spec)
	if err != nil {
		return spec, fmt.Errorf("copy %s: %w", p.Ref, err)
	}
	spec.PropagateDeps = ps.PropagateDeps || ps.Association
	spec.Placement = &ps.Placement
	spec.SchedulerName = ps.EffectiveSchedulerName()
	spec.Failover = ps.Failover
	spec.ConflictResolution = ps.EffectiveConflictResolution()
	spec.PreserveResourcesOnDeletion = ps.PreserveResourcesOnDeletion
	if ps.Suspension != nil {
		spec.Suspension = &workv1alpha1.Suspension{Suspension: *ps.Suspension}
	}
	return spec, nil
}

// copySpec deep-copies a policy spec (the API types have no DeepCopy), so
// that bindings never share memory with the index's policies.
func copySpec(s policyv1alpha1.PropagationSpec) (*policyv1alpha1.PropagationSpec, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := &policyv1alpha1.PropagationSpec{}
	return out, json.Unmarshal(data, out)
}

// Want is what the detector decided for one binding.
type Want struct {
	// Policy claims the binding; nil for an attached binding.
	Policy *Policy
	// Spec holds the detector's fields (see BuildSpec). Ignored when Keep.
	Spec workv1alpha1.ResourceBindingSpec
	// Keep leaves the existing policy part and claim as they are.
	Keep bool
	// Release removes the claim and leaves the policy part as it is,
	// except the placement when Pin is set.
	Release bool
	// Auto marks the binding auto-propagated (no claim) with Spec's
	// policy part (a Namespace no policy claims).
	Auto bool
	// Pin, with Release, replaces the placement: an auto-propagated
	// Namespace opted out stays on its clusters only.
	Pin *policyv1alpha1.Placement
	// RequiredBy lists the bindings that need this template as a
	// dependency, sorted.
	RequiredBy []workv1alpha1.BindingSnapshot
}

// Merge returns the binding of t to store: existing (nil when there is
// none) with the detector's fields and claim replaced by want, and every
// other field (clusters, eviction tasks, reschedule trigger, status, other
// metadata) kept.
func Merge(existing *workv1alpha1.ResourceBinding, t *Template, want Want) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{}
	if existing != nil {
		// A shallow copy is enough: only the label and annotation maps are
		// modified in place; spec fields are replaced, never mutated.
		*b = *existing
		b.Labels, b.Annotations = maps.Clone(existing.Labels), maps.Clone(existing.Annotations)
	}
	b.APIVersion = workv1alpha1.GroupVersion.String()
	b.Kind = workv1alpha1.KindResourceBinding
	if t.Ref.Namespace == "" {
		b.Kind = workv1alpha1.KindClusterResourceBinding
	}
	b.Namespace, b.Name = t.Ref.Namespace, BindingName(t.Ref.Kind, t.Ref.Name)
	switch {
	case want.Release:
		setClaim(b, nil)
		if want.Pin != nil {
			b.Spec.Placement = want.Pin
		}
	case want.Auto:
		setClaim(b, nil)
		b.Labels[LabelAutoPropagated] = "true"
		setOwned(b, want.Spec)
	case !want.Keep:
		setClaim(b, want.Policy)
		setOwned(b, want.Spec)
	}
	b.Spec.RequiredBy = want.RequiredBy
	return b
}

// setOwned replaces the detector's spec fields. The suspension keeps the
// scheduling flag, which is not the policy's.
func setOwned(b *workv1alpha1.ResourceBinding, s workv1alpha1.ResourceBindingSpec) {
	var scheduling *bool
	if b.Spec.Suspension != nil {
		scheduling = b.Spec.Suspension.Scheduling
	}
	b.Spec.Resource = s.Resource
	b.Spec.PropagateDeps = s.PropagateDeps
	b.Spec.ReplicaRequirements = s.ReplicaRequirements
	b.Spec.Replicas = s.Replicas
	b.Spec.Components = s.Components
	b.Spec.Placement = s.Placement
	b.Spec.SchedulerName = s.SchedulerName
	b.Spec.Failover = s.Failover
	b.Spec.ConflictResolution = s.ConflictResolution
	b.Spec.PreserveResourcesOnDeletion = s.PreserveResourcesOnDeletion
	b.Spec.SchedulePriority = s.SchedulePriority
	b.Spec.Suspension = s.Suspension
	if scheduling != nil {
		if b.Spec.Suspension == nil {
			b.Spec.Suspension = &workv1alpha1.Suspension{}
		}
		b.Spec.Suspension.Scheduling = scheduling
	}
}

// setClaim writes p's claim metadata (removing any other claim and the
// auto-propagation mark), or removes every claim when p is nil. It leaves
// the label and annotation maps non-nil.
func setClaim(b *workv1alpha1.ResourceBinding, p *Policy) {
	for _, k := range []string{LabelPPPermanentID, LabelCPPPermanentID, LabelAutoPropagated} {
		delete(b.Labels, k)
	}
	for _, k := range []string{AnnotationPPNamespace, AnnotationPPName, AnnotationCPPName} {
		delete(b.Annotations, k)
	}
	if b.Labels == nil {
		b.Labels = map[string]string{}
	}
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	if p == nil {
		return
	}
	if p.Ref.Cluster {
		b.Labels[LabelCPPPermanentID] = p.ID
		b.Annotations[AnnotationCPPName] = p.Ref.Name
		return
	}
	b.Labels[LabelPPPermanentID] = p.ID
	b.Annotations[AnnotationPPNamespace] = p.Ref.Namespace
	b.Annotations[AnnotationPPName] = p.Ref.Name
}

// ClaimOf reads the claim of a binding; nil when it has none.
func ClaimOf(b *workv1alpha1.ResourceBinding) *Claim {
	if id, ok := b.Labels[LabelPPPermanentID]; ok {
		ref := PolicyRef{Namespace: b.Annotations[AnnotationPPNamespace], Name: b.Annotations[AnnotationPPName]}
		return &Claim{Policy: ref, ID: id}
	}
	if id, ok := b.Labels[LabelCPPPermanentID]; ok {
		return &Claim{Policy: PolicyRef{Cluster: true, Name: b.Annotations[AnnotationCPPName]}, ID: id}
	}
	return nil
}
