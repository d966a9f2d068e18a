package detector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// deploymentJSON is a Deployment with 3 replicas, requests, a ConfigMap
// volume and a Secret env reference.
const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"web","namespace":"prod","uid":"u-1","labels":{"app":"web"}},
 "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{
   "containers":[{"name":"c","image":"nginx",
     "resources":{"requests":{"cpu":"250m","memory":"64Mi"}},
     "env":[{"name":"PW","valueFrom":{"secretKeyRef":{"name":"web-secret","key":"pw"}}}]}],
   "volumes":[{"name":"cfg","configMap":{"name":"web-config"}}]}}}}`

func TestResolve(t *testing.T) {
	parent := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}
	svcA := tmpl("v1", "Service", "prod/a", 1, map[string]string{"x": "1"})
	svcB := tmpl("v1", "Service", "prod/b", 1, map[string]string{"x": "2"})
	list := func(group, kind, ns string) []*bind.Template {
		if group == "" && kind == "Service" && ns == "prod" {
			return []*bind.Template{svcA, svcB}
		}
		return nil
	}
	deps := []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "Secret", Name: "s"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "c"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "c"},
		{APIVersion: "v1", Kind: "Service", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "2"}}},
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
	}
	got := Resolve(parent, deps, list)
	want := []store.ObjectRef{
		{Kind: "ConfigMap", Namespace: "prod", Name: "c"},
		{Kind: "Secret", Namespace: "prod", Name: "s"},
		{Kind: "Service", Namespace: "prod", Name: "b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Resolve (-want +got):\n%s", diff)
	}
}

func TestRequiredBy(t *testing.T) {
	b := func(ns, name string, clusters ...string) *workv1alpha1.ResourceBinding {
		rb := &workv1alpha1.ResourceBinding{}
		rb.Namespace, rb.Name = ns, name
		for _, c := range clusters {
			rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha1.TargetCluster{Name: c})
		}
		return rb
	}
	got := RequiredBy([]*workv1alpha1.ResourceBinding{b("prod", "z-deployment", "m2"), b("prod", "a-deployment", "m1")})
	want := []workv1alpha1.BindingSnapshot{
		{Namespace: "prod", Name: "a-deployment", Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}}},
		{Namespace: "prod", Name: "z-deployment", Clusters: []workv1alpha1.TargetCluster{{Name: "m2"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RequiredBy (-want +got):\n%s", diff)
	}
	// A parent failing over from m3 keeps its dependency there until its
	// eviction task ends.
	leaving := b("prod", "web", "m1")
	leaving.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m3"}, {FromCluster: "m1"}}
	got = RequiredBy([]*workv1alpha1.ResourceBinding{leaving})
	want = []workv1alpha1.BindingSnapshot{{Namespace: "prod", Name: "web", Clusters: []workv1alpha1.TargetCluster{{Name: "m1"}, {Name: "m3"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RequiredBy(parent leaving m3) (-want +got):\n%s", diff)
	}
	if got := RequiredBy(nil); got != nil {
		t.Errorf("RequiredBy(nil) = %v; want nil", got)
	}
}
