package work

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// TestRenderQuota: a static assignment renders as a ResourceQuota named
// like the quota, with the assignment's hard, the quota's ownership and
// the default apply options; a cluster without an assignment is an error.
func TestRenderQuota(t *testing.T) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	q.Namespace, q.Name = "team-a", "q"
	q.Spec.Overall = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	q.Spec.StaticAssignments = []policyv1alpha1.StaticClusterAssignment{
		{ClusterName: "edge-1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
		{ClusterName: "edge-2", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}},
	}
	b := QuotaBinding(q, "42")
	if len(b.Spec.Clusters) != 2 || b.Spec.Clusters[1].Name != "edge-2" || b.Namespace != "team-a" || b.Name != "q" || b.UID != "42" {
		t.Fatalf("QuotaBinding = %+v; want team-a/q, uid 42, targets edge-1 and edge-2", b)
	}
	const key = "policy.tether.io/FederatedResourceQuota/team-a/q"
	w, err := RenderQuota(key, q, b, "edge-1")
	if err != nil {
		t.Fatalf("RenderQuota(edge-1): %v", err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(w.Upsert.GetManifests()[0]); err != nil {
		t.Fatal(err)
	}
	hard, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "hard")
	got := strings.Join([]string{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName(), hard["cpu"], hard["memory"],
		obj.GetLabels()[LabelBindingID], obj.GetAnnotations()[AnnotationWorkKey], w.Upsert.GetWorkKey()}, " ")
	if want := "v1 ResourceQuota team-a q 1 2Gi 42 " + key + " " + key; got != want {
		t.Errorf("RenderQuota(edge-1) = %q; want %q", got, want)
	}
	if _, ok := obj.Object["status"]; ok {
		t.Errorf("RenderQuota(edge-1) has a status: %v", obj.Object["status"])
	}
	if o := w.Upsert.GetApplyOptions(); o.GetDeletionPolicy() != agentv1.DeletionPolicy_DELETION_POLICY_DELETE ||
		o.GetConflictResolution() != agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT {
		t.Errorf("RenderQuota(edge-1) options = %v; want DELETE, Abort", o)
	}
	w2, err := RenderQuota(key, q, b, "edge-2")
	if err != nil || w2.Upsert.GetVersion() == w.Upsert.GetVersion() {
		t.Errorf("RenderQuota(edge-2) = %v, %v; want its own version", w2, err)
	}
	if _, err := RenderQuota(key, q, b, "regional-1"); err == nil || !strings.Contains(err.Error(), "assigns the cluster nothing") {
		t.Errorf("RenderQuota(regional-1) = %v; want an error: the quota assigns it nothing", err)
	}
}
