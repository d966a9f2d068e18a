package detector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Priority is how specifically a selector matches a template (Karmada's
// util.ImplicitPriority). Higher is more specific; PriorityMisMatch is no
// match.
type Priority int

// Implicit priorities, Karmada's values.
const (
	PriorityMisMatch           Priority = 0
	PriorityMatchAll           Priority = 1
	PriorityMatchLabelSelector Priority = 2
	PriorityMatchName          Priority = 3
)

// ResourceSelectorPriority is how sel matches obj (spec §2.1): apiVersion and
// kind must be equal strings and a set namespace must be equal; then a name
// matches by equality alone (its label selector is ignored), no name and no
// label selector matches everything, and a label selector matches by labels
// (an invalid one never matches; an empty one matches everything).
func ResourceSelectorPriority(sel policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) Priority {
	if sel.APIVersion != obj.GetAPIVersion() || sel.Kind != obj.GetKind() {
		return PriorityMisMatch
	}
	if sel.Namespace != "" && sel.Namespace != obj.GetNamespace() {
		return PriorityMisMatch
	}
	if sel.Name != "" {
		if sel.Name == obj.GetName() {
			return PriorityMatchName
		}
		return PriorityMisMatch
	}
	if sel.LabelSelector == nil {
		return PriorityMatchAll
	}
	s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
	if err != nil || !s.Matches(labels.Set(obj.GetLabels())) {
		return PriorityMisMatch
	}
	return PriorityMatchLabelSelector
}

// MatchPriority is a policy's implicit priority for obj: the highest over
// its selectors (Karmada's ResourceMatchSelectorsPriority).
func MatchPriority(selectors []policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) Priority {
	best := PriorityMisMatch
	for _, sel := range selectors {
		if p := ResourceSelectorPriority(sel, obj); p > best {
			best = p
		}
	}
	return best
}

// namesTemplate reports whether one of the selectors names obj, which is
// what preemption requires.
func namesTemplate(selectors []policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) bool {
	for _, sel := range selectors {
		if sel.Name != "" && ResourceSelectorPriority(sel, obj) == PriorityMatchName {
			return true
		}
	}
	return false
}
