// Package worktest holds the fixtures the tests of hub/pipeline/work and
// hub/render share: a stored Deployment template, placements, bindings,
// clusters, an override policy, and the real interpreter built once.
// hub/pipeline/work's own tests import it, so it cannot import that
// package.
//
// It imports api/cluster/v1alpha1, api/policy/v1alpha1,
// api/work/v1alpha1 and internal/interpreter, never hub/pipeline/work.
package worktest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// DeploymentYAML is a template as the hub stores it, with the fields a
// member must not get.
const DeploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  uid: 7d2c
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  labels: {app: web}
  annotations: {deployment.kubernetes.io/revision: "3", team: blue}
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "1"}]
  managedFields: [{manager: kubectl}]
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
status:
  replicas: 6
`

var (
	interpOnce sync.Once
	interpVal  *interpreter.Interpreter
)

// Interpreter is the real interpreter facade (Lua customizations,
// built-ins, native), built once.
func Interpreter(t testing.TB) *interpreter.Interpreter {
	t.Helper()
	interpOnce.Do(func() {
		i, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
		if err != nil {
			t.Fatalf("interpreter.New: %v", err)
		}
		interpVal = i
	})
	return interpVal
}

// Object decodes a YAML document.
func Object(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("YAMLToJSON: %v", err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("UnmarshalJSON: %v", err)
	}
	return obj
}

// Manifest is the single manifest of a work, decoded.
func Manifest(t testing.TB, key string, manifests [][]byte) *unstructured.Unstructured {
	t.Helper()
	if n := len(manifests); n != 1 {
		t.Fatalf("work %s has %d manifests; want 1", key, n)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(manifests[0]); err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	return obj
}

// Divided and Duplicated are placements.
func Divided() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
}

func Duplicated() *policyv1alpha1.Placement { return &policyv1alpha1.Placement{} }

// Binding is the binding of default/web placed on clusters.
func Binding(p *policyv1alpha1.Placement, replicas int32, clusters ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	return &workv1alpha1.ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: workv1alpha1.KindResourceBinding},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", UID: "b-1"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
			Replicas:  replicas,
			Placement: p,
			Clusters:  clusters,
		},
	}
}

// Target is a binding's target cluster.
func Target(name string, replicas int32) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Replicas: replicas}
}

// Cluster is a member cluster labelled region=region.
func Cluster(name, region string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: clusterv1alpha1.GroupVersion.String(), Kind: clusterv1alpha1.KindCluster},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"region": region}},
		Spec:       clusterv1alpha1.ClusterSpec{Region: region},
	}
}

// RegionRegistry is an OverridePolicy of namespace default that sets the
// image registry of every Deployment to <region>.registry.io on the
// clusters labelled region=<region>, for each region given.
func RegionRegistry(regions ...string) policyv1alpha1.OverridePolicy {
	p := policyv1alpha1.OverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindOverridePolicy},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "registry"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		},
	}
	for _, r := range regions {
		p.Spec.OverrideRules = append(p.Spec.OverrideRules, policyv1alpha1.RuleWithCluster{
			TargetCluster: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": r}}},
			Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
				Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: r + ".registry.io"}}},
		})
	}
	return p
}

// JSON encodes v for storing.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return b
}
