package bind

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// How a policy's resource selectors match a template (Karmada's implicit
// priority, spec §2.1) is decided in one place, internal/overrides
// (SelectorPriority, ResourcePriority, MatchesResource), which override
// policies use too.

// namesTemplate reports whether one of the selectors names obj, which is
// what preemption requires.
func namesTemplate(selectors []policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured) bool {
	for _, sel := range selectors {
		if sel.Name != "" && overrides.SelectorPriority(obj, sel) == overrides.PriorityName {
			return true
		}
	}
	return false
}
