package bind

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// The priority rules themselves are tested in internal/overrides
// (TestSelectorPriority); this is the part only preemption uses.
func TestNamesTemplate(t *testing.T) {
	web := deploy("prod/web", map[string]string{"app": "web"})
	cases := []struct {
		name string
		sels []policyv1alpha1.ResourceSelector
		want bool
	}{
		{"name", deploys(selName("apps/v1", "Deployment", "prod", "web")), true},
		{"name among others", deploys(selAll("apps/v1", "Deployment"), selName("apps/v1", "Deployment", "", "web")), true},
		{"name ignores labels", deploys(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nope"}}}), true},
		{"other name", deploys(selName("apps/v1", "Deployment", "", "api")), false},
		{"other namespace", deploys(selName("apps/v1", "Deployment", "dev", "web")), false},
		{"kind only", deploys(selAll("apps/v1", "Deployment")), false},
		{"labels only", deploys(selLabels("apps/v1", "Deployment", map[string]string{"app": "web"})), false},
		{"no selectors", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := namesTemplate(c.sels, web.Obj); got != c.want {
				t.Errorf("namesTemplate(%+v) = %t; want %t", c.sels, got, c.want)
			}
		})
	}
}
