package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

func TestResourceSelectorPriority(t *testing.T) {
	web := deploy("prod/web", map[string]string{"app": "web"})
	cases := []struct {
		name string
		sel  policyv1alpha1.ResourceSelector
		want Priority
	}{
		{"kind only", selAll("apps/v1", "Deployment"), PriorityMatchAll},
		{"other kind", selAll("apps/v1", "StatefulSet"), PriorityMisMatch},
		{"other apiVersion", selAll("apps/v1beta1", "Deployment"), PriorityMisMatch},
		{"same namespace", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}, PriorityMatchAll},
		{"other namespace", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "dev"}, PriorityMisMatch},
		{"name", selName("apps/v1", "Deployment", "", "web"), PriorityMatchName},
		{"other name", selName("apps/v1", "Deployment", "", "api"), PriorityMisMatch},
		{"name ignores labels", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nope"}}}, PriorityMatchName},
		{"labels match", selLabels("apps/v1", "Deployment", map[string]string{"app": "web"}), PriorityMatchLabelSelector},
		{"labels differ", selLabels("apps/v1", "Deployment", map[string]string{"app": "api"}), PriorityMisMatch},
		{"empty label selector", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment",
			LabelSelector: &metav1.LabelSelector{}}, PriorityMatchLabelSelector},
		{"invalid label selector", policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment",
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}},
			PriorityMisMatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ResourceSelectorPriority(c.sel, web.Obj); got != c.want {
				t.Errorf("ResourceSelectorPriority(%+v) = %d; want %d", c.sel, got, c.want)
			}
		})
	}
}

func TestMatchPriorityIsTheBestSelector(t *testing.T) {
	web := deploy("prod/web", map[string]string{"app": "web"})
	sels := deploys(selAll("apps/v1", "Deployment"), selName("apps/v1", "Deployment", "prod", "web"),
		selLabels("apps/v1", "Deployment", map[string]string{"app": "web"}))
	if got := MatchPriority(sels, web.Obj); got != PriorityMatchName {
		t.Errorf("MatchPriority = %d; want %d", got, PriorityMatchName)
	}
	if got := MatchPriority(nil, web.Obj); got != PriorityMisMatch {
		t.Errorf("MatchPriority(no selectors) = %d; want %d (an empty list matches nothing)", got, PriorityMisMatch)
	}
}
