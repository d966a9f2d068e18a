package overrides

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// deploymentYAML is the template most tests override.
const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        image: busybox:1
      containers:
      - name: web
        image: nginx:1.19
        command: [nginx, -g, daemon off;]
      - name: sidecar
        image: envoy:1
`

// object decodes a YAML manifest into an unstructured object.
func object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatalf("YAMLToJSON: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatalf("decode object: %v", err)
	}
	return u
}

// testCluster is the cluster most tests target.
func testCluster() *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east", Zones: []string{"z1", "z2"}},
	}
}

// op builds an OverridePolicy in namespace default with one rule.
func op(name string, selectors []policyv1alpha1.ResourceSelector, o policyv1alpha1.Overriders) policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: selectors,
			OverrideRules:     []policyv1alpha1.RuleWithCluster{{Overriders: o}},
		},
	}
}

// cop builds a ClusterOverridePolicy with one rule.
func cop(name string, selectors []policyv1alpha1.ResourceSelector, o policyv1alpha1.Overriders) policyv1alpha1.ClusterOverridePolicy {
	return policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: selectors,
			OverrideRules:     []policyv1alpha1.RuleWithCluster{{Overriders: o}},
		},
	}
}

// field returns the JSON encoding of the value at a JSON pointer, or
// "<missing>".
func field(t testing.TB, u *unstructured.Unstructured, pointer string) string {
	t.Helper()
	v, err := getPointer(u.Object, pointer)
	if err != nil {
		return "<missing>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %s: %v", pointer, err)
	}
	return string(b)
}

// annotate is an overrider setting annotation key to value.
func annotate(key, value string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
		{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{key: value}},
	}}
}
