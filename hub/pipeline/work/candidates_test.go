package work

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

func TestCandidates(t *testing.T) {
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	selectWeb := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	selectOther := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}}
	cop := func(name string, sel []policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterOverridePolicy {
		return &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.OverrideSpec{ResourceSelectors: sel}}
	}
	op := func(ns, name string, sel []policyv1alpha1.ResourceSelector) *policyv1alpha1.OverridePolicy {
		return &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: policyv1alpha1.OverrideSpec{ResourceSelectors: sel}}
	}
	cops, ops := Candidates(web,
		[]*policyv1alpha1.ClusterOverridePolicy{cop("z-all", nil), cop("other", selectOther), cop("a-web", selectWeb)},
		[]*policyv1alpha1.OverridePolicy{op("shop", "web", selectWeb), op("elsewhere", "all", nil), op("shop", "b-all", nil)})
	var gotC, gotO []string
	for _, p := range cops {
		gotC = append(gotC, p.Name)
	}
	for _, p := range ops {
		gotO = append(gotO, p.Namespace+"/"+p.Name)
	}
	if diff := cmp.Diff([]string{"a-web", "z-all"}, gotC); diff != "" {
		t.Errorf("Candidates cluster override policies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shop/b-all", "shop/web"}, gotO); diff != "" {
		t.Errorf("Candidates override policies (-want +got):\n%s", diff)
	}
}
