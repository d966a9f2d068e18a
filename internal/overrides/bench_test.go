package overrides

import (
	"encoding/json"
	"testing"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// BenchmarkApplyOverrides applies three policies (image, labels,
// plaintext) to a Deployment for one cluster, as the binding controller
// does once per target cluster.
func BenchmarkApplyOverrides(b *testing.B) {
	tmpl := object(b, deploymentYAML)
	cluster := testCluster()
	cops := []policyv1alpha1.ClusterOverridePolicy{cop("mirror", nil, policyv1alpha1.Overriders{
		ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: replace, Value: "mirror.local:5000"}},
	})}
	ops := []policyv1alpha1.OverridePolicy{
		op("labels", byLabel, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: add, Value: map[string]string{"cluster": "m1", "app.kubernetes.io/part-of": "shop"}},
		}}),
		op("replicas", byName, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Operator: replace, Path: "/spec/replicas", Value: json.RawMessage(`5`)},
			{Operator: add, Path: "/spec/template/spec/nodeSelector", Value: json.RawMessage(`{"disk":"ssd"}`)},
		}}),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(tmpl, cluster, cops, ops); err != nil {
			b.Fatal(err)
		}
	}
}
