package bind

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter/native"
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

func decodeT(t *testing.T, js string, rev int64) *Template {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decode: %v", err)
	}
	gv := obj.GroupVersionKind()
	ref := store.ObjectRef{Group: gv.Group, Kind: gv.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return &Template{Ref: ref, Obj: obj, Revision: rev}
}

func TestBuildSpec(t *testing.T) {
	interp := WithoutContext(native.New())
	overwrite := policyv1alpha1.ConflictOverwrite
	p := pol("prod/pp", 0, deploys(selAll("apps/v1", "Deployment")), func(p *Policy) {
		p.Spec.PropagateDeps = true
		p.Spec.ConflictResolution = overwrite
		p.Spec.SchedulerName = "other"
		p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}
	})
	crd := decodeT(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"},"spec":{"replicas":7}}`, 4)
	cases := []struct {
		name     string
		tmpl     *Template
		replicas int32
		req      *configv1alpha1.ReplicaRequirements
	}{
		{"deployment", decodeT(t, deploymentJSON, 12), 3, &configv1alpha1.ReplicaRequirements{
			ResourceRequest: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("250m"),
				corev1.ResourceMemory: resource.MustParse("64Mi"),
			}}},
		{"unknown kind is not replicated", crd, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := BuildSpec(context.Background(), c.tmpl, p, interp)
			if err != nil {
				t.Fatalf("BuildSpec(%s): %v", c.name, err)
			}
			if spec.Replicas != c.replicas {
				t.Errorf("BuildSpec(%s).Replicas = %d; want %d", c.name, spec.Replicas, c.replicas)
			}
			if diff := cmp.Diff(c.req, spec.ReplicaRequirements); diff != "" {
				t.Errorf("BuildSpec(%s).ReplicaRequirements (-want +got):\n%s", c.name, diff)
			}
			wantRef := workv1alpha1.ObjectReference{APIVersion: c.tmpl.Obj.GetAPIVersion(), Kind: c.tmpl.Ref.Kind,
				Namespace: "prod", Name: c.tmpl.Ref.Name, UID: c.tmpl.Obj.GetUID(), ResourceVersion: c.tmpl.ResourceVersion()}
			if spec.Resource != wantRef {
				t.Errorf("BuildSpec(%s).Resource = %+v; want %+v", c.name, spec.Resource, wantRef)
			}
			if !spec.PropagateDeps || spec.ConflictResolution != overwrite || spec.SchedulerName != "other" ||
				spec.Placement == nil || spec.Placement.ClusterAffinity.ClusterNames[0] != "m1" {
				t.Errorf("BuildSpec(%s) = %+v; want the policy's propagateDeps, conflictResolution, schedulerName and placement", c.name, spec)
			}
			spec.Placement.ClusterAffinity.ClusterNames[0] = "changed"
			if p.Spec.Placement.ClusterAffinity.ClusterNames[0] != "m1" {
				t.Errorf("BuildSpec(%s) shares the placement with the policy", c.name)
			}
		})
	}
}

func TestMergeKeepsSchedulerFields(t *testing.T) {
	tm := deploy("prod/web", nil)
	cpp := pol("cpp", 0, deploys(selAll("apps/v1", "Deployment")))
	pp := pol("prod/pp", 0, deploys(selAll("apps/v1", "Deployment")))
	yes := true
	now := metav1.Now()
	existing := Merge(nil, tm, Want{Policy: cpp, Spec: workv1alpha1.ResourceBindingSpec{Resource: Reference(tm), Replicas: 1}})
	existing.Annotations["policy.karmada.io/applied-placement"] = "{}"
	existing.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 1}}
	existing.Spec.RescheduleTriggeredAt = &now
	existing.Spec.Suspension = &workv1alpha1.Suspension{Scheduling: &yes}
	existing.Status.SchedulerObservedAffinityName = "a"

	got := Merge(existing, tm, Want{Policy: pp, Spec: workv1alpha1.ResourceBindingSpec{Resource: Reference(tm), Replicas: 4}})
	if got.Spec.Replicas != 4 || got.Spec.Clusters[0].Name != "m1" || got.Spec.RescheduleTriggeredAt == nil ||
		got.Status.SchedulerObservedAffinityName != "a" || got.Annotations["policy.karmada.io/applied-placement"] != "{}" ||
		got.Spec.Suspension == nil || got.Spec.Suspension.Scheduling == nil {
		t.Errorf("Merge = %+v; want new replicas with clusters, reschedule trigger, status, annotations and scheduling suspension kept", got)
	}
	if c := ClaimOf(got); c == nil || c.Policy != pp.Ref || c.ID != pp.ID {
		t.Errorf("ClaimOf(Merge) = %+v; want %s", c, pp.Ref)
	}
	if _, ok := got.Annotations[AnnotationCPPName]; ok {
		t.Errorf("Merge kept the ClusterPropagationPolicy claim: %v", got.Annotations)
	}
	if _, ok := existing.Annotations[AnnotationPPName]; ok {
		t.Errorf("Merge modified its input: %v", existing.Annotations)
	}
	if got.Kind != workv1alpha1.KindResourceBinding || got.Name != "web-deployment" || got.Namespace != "prod" {
		t.Errorf("Merge = %s %s/%s; want ResourceBinding prod/web-deployment", got.Kind, got.Namespace, got.Name)
	}
	kept := Merge(got, tm, Want{Keep: true, Spec: workv1alpha1.ResourceBindingSpec{Replicas: 9}})
	if kept.Spec.Replicas != 4 || ClaimOf(kept) == nil {
		t.Errorf("Merge(Keep) = %+v; want the binding unchanged", kept.Spec)
	}
}

func TestBindingName(t *testing.T) {
	cases := []struct{ kind, name, want string }{
		{"Deployment", "Web", "web-deployment"},
		{"ClusterRole", "system:admin", "system.admin-clusterrole"},
	}
	for _, c := range cases {
		if got := BindingName(c.kind, c.name); got != c.want {
			t.Errorf("BindingName(%s, %s) = %s; want %s", c.kind, c.name, got, c.want)
		}
	}
}

func TestFilter(t *testing.T) {
	f, err := NewFilter(DefaultSkippedNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tmpl *Template
		want bool
	}{
		{"ordinary", deploy("prod/web", nil), false},
		{"cluster-scoped", tmpl("v1", "Namespace", "prod", 1, nil), false},
		{"tether-system", deploy("tether-system/web", nil), true},
		{"karmada-es", deploy("karmada-es-m1/web", nil), true},
		{"kube-system", deploy("kube-system/web", nil), true},
		{"kube-public", deploy("kube-public/web", nil), true},
		{"kubeflow is not kube-*", deploy("kubeflow/web", nil), false},
		{"claimed by another controller", deploy("prod/web", map[string]string{ClaimedByLabels[0]: "mcs"}), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := f.Ignored(c.tmpl); got != c.want {
				t.Errorf("Ignored(%s) = %v; want %v", c.tmpl.Ref.Name, got, c.want)
			}
		})
	}
	if _, err := NewFilter([]string{"("}); err == nil {
		t.Errorf("NewFilter(\"(\") = nil error; want a pattern error")
	}
}
