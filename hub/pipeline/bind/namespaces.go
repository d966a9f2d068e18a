package bind

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// Namespace auto-propagation (Karmada's namespace sync controller): every
// Namespace template goes to every cluster unless a
// ClusterPropagationPolicy claims it, its name is reserved, skipped or
// "default", or it carries an opt-out label.
const (
	// LabelAutoPropagated marks a binding that auto-propagation owns (it
	// has no policy claim).
	LabelAutoPropagated = "namespace.tether.io/auto-propagated"
	// namespaceDefault is never propagated (every cluster has it), as in
	// Karmada.
	namespaceDefault = "default"
)

// SkipAutoPropagationLabels opt a Namespace out of auto-propagation with
// the value "true" (any case): Karmada's label and Tether's spelling.
var SkipAutoPropagationLabels = []string{"namespace.karmada.io/skip-auto-propagation", "namespace.tether.io/skip-auto-propagation"}

// PropagatesNamespace reports whether namespace name is auto-propagated
// by name: not "", "default", reserved or skipped.
func (f *Filter) PropagatesNamespace(name string) bool {
	return name != "" && name != namespaceDefault && !f.NamespaceIgnored(name)
}

// AutoPropagated reports whether t is a Namespace template that
// auto-propagation places on every cluster when no
// ClusterPropagationPolicy claims it: propagated by name and not opted
// out by label.
func (f *Filter) AutoPropagated(t *Template) bool {
	if !isNamespace(t.Ref) || !f.PropagatesNamespace(t.Ref.Name) {
		return false
	}
	labels := t.Obj.GetLabels()
	for _, k := range SkipAutoPropagationLabels {
		if strings.EqualFold(labels[k], "true") {
			return false
		}
	}
	return true
}

func isNamespace(ref store.ObjectRef) bool {
	return ref.Group == "" && ref.Kind == "Namespace" && ref.Namespace == ""
}

// NamespacePolicy is the placement auto-propagation gives a Namespace:
// every cluster, whatever its taints (Karmada's namespace controller
// ignores them, so that a workload tolerating a taint finds its
// namespace), Duplicated, conflictResolution Abort (a namespace a member
// already has is not taken over), no failover.
// Its Ref is empty: it claims nothing. Simulations use it as the detector
// does.
func NamespacePolicy() *Policy {
	p := &Policy{Spec: policyv1alpha1.PropagationSpec{Placement: policyv1alpha1.Placement{
		ClusterTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}}}
	p.Spec.SetDefaults()
	return p
}

// AutoPropagatedOf reports whether auto-propagation owns binding b.
func AutoPropagatedOf(b *workv1alpha1.ResourceBinding) bool {
	return b.Labels[LabelAutoPropagated] == "true"
}

// Pinned is the placement of an auto-propagated binding whose Namespace
// was opted out: the clusters it is on and no other, so that it is never
// removed from them (as in Karmada, the label keeps existing copies) and
// no new cluster gets it. ok is false when it is on no cluster.
func Pinned(b *workv1alpha1.ResourceBinding) (*policyv1alpha1.Placement, bool) {
	if len(b.Spec.Clusters) == 0 || b.Spec.Placement == nil {
		return nil, false
	}
	p := *b.Spec.Placement
	p.ClusterAffinity = &policyv1alpha1.ClusterAffinity{}
	for _, c := range b.Spec.Clusters {
		p.ClusterAffinity.ClusterNames = append(p.ClusterAffinity.ClusterNames, c.Name)
	}
	return &p, true
}
