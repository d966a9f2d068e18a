package overrides

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// TestSignature: clusters that the rules select alike share a signature
// unless a valueFrom source reads something that differs between them; a
// cluster that cannot answer a source has one of its own.
func TestSignature(t *testing.T) {
	eu := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
	static := []policyv1alpha1.OverridePolicy{op("static", nil, annotate("a", "b"))}
	static[0].Spec.OverrideRules[0].TargetCluster = eu
	fromLabel := []policyv1alpha1.OverridePolicy{op("site", nil, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
		{Path: "/metadata/name", Operator: replace, ValueFrom: &fromSite}}})}
	c := func(name, region, site string) *clusterv1alpha1.Cluster {
		labels := map[string]string{"region": region}
		if site != "" {
			labels["site"] = site
		}
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	cases := []struct {
		name   string
		ops    []policyv1alpha1.OverridePolicy
		a, b   *clusterv1alpha1.Cluster
		shared bool
	}{
		{"same rules, no valueFrom", static, c("e1", "eu", "x"), c("e2", "eu", "y"), true},
		{"different rules", static, c("e1", "eu", ""), c("u1", "us", ""), false},
		{"same label value", fromLabel, c("e1", "eu", "paris"), c("e2", "us", "paris"), true},
		{"different label values", fromLabel, c("e1", "eu", "paris"), c("e2", "eu", "lyon"), false},
		{"both without the label", fromLabel, c("e1", "eu", ""), c("e2", "eu", ""), false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			sa, sb := Signature(tt.a, nil, tt.ops), Signature(tt.b, nil, tt.ops)
			if (sa == sb) != tt.shared {
				t.Errorf("Signature(%s) = %q, Signature(%s) = %q; want shared %v", tt.a.Name, sa, tt.b.Name, sb, tt.shared)
			}
		})
	}
	a, b := c("e1", "eu", "x"), c("e1", "eu", "x")
	b.Annotations = map[string]string{"k": "v"}
	if SameForOverrides(a, b) {
		t.Errorf("SameForOverrides with different annotations = true; want false")
	}
}
