package work

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// Candidates returns the override policies that apply to obj, each kind in
// name order: the ClusterOverridePolicies that select it and, for a
// namespaced obj, the OverridePolicies of its namespace that select it
// (empty selectors select everything). Render applies them in that order.
// The renderer and the hub's Simulate both choose a template's override
// policies with it.
func Candidates(obj *unstructured.Unstructured, cops []*policyv1alpha1.ClusterOverridePolicy, ops []*policyv1alpha1.OverridePolicy) ([]policyv1alpha1.ClusterOverridePolicy, []policyv1alpha1.OverridePolicy) {
	var outC []policyv1alpha1.ClusterOverridePolicy
	for _, p := range cops {
		if Selects(obj, p.Spec.ResourceSelectors) {
			outC = append(outC, *p)
		}
	}
	slices.SortFunc(outC, func(a, b policyv1alpha1.ClusterOverridePolicy) int { return cmp.Compare(a.Name, b.Name) })
	var outO []policyv1alpha1.OverridePolicy
	if ns := obj.GetNamespace(); ns != "" {
		for _, p := range ops {
			if p.Namespace == ns && Selects(obj, p.Spec.ResourceSelectors) {
				outO = append(outO, *p)
			}
		}
	}
	slices.SortFunc(outO, func(a, b policyv1alpha1.OverridePolicy) int { return cmp.Compare(a.Name, b.Name) })
	return outC, outO
}

// Selects reports whether an override policy with selectors applies to
// obj: empty selectors match everything.
func Selects(obj *unstructured.Unstructured, selectors []policyv1alpha1.ResourceSelector) bool {
	return len(selectors) == 0 || overrides.MatchesResource(obj, selectors...)
}
