package overrides

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

func TestSelectorPriority(t *testing.T) {
	obj := object(t, deploymentYAML)
	sel := func(mod func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
		rs := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
		mod(&rs)
		return rs
	}
	labels := func(m map[string]string) *metav1.LabelSelector { return &metav1.LabelSelector{MatchLabels: m} }
	tests := []struct {
		name string
		rs   policyv1alpha1.ResourceSelector
		want Priority
	}{
		{"kind only", sel(func(*policyv1alpha1.ResourceSelector) {}), PriorityMatchAll},
		{"other apiVersion", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.APIVersion = "apps/v1beta1" }), PriorityMismatch},
		{"other kind", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Kind = "StatefulSet" }), PriorityMismatch},
		{"same namespace", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "default" }), PriorityMatchAll},
		{"other namespace", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Namespace = "prod" }), PriorityMismatch},
		{"name", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Name = "web" }), PriorityName},
		{"other name", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.Name = "api" }), PriorityMismatch},
		{"name ignores the labelSelector", sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.Name, rs.LabelSelector = "web", labels(map[string]string{"app": "nope"})
		}), PriorityName},
		{"labelSelector", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.LabelSelector = labels(map[string]string{"app": "web"}) }), PriorityLabelSelector},
		{"empty labelSelector matches all at label priority", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.LabelSelector = labels(nil) }), PriorityLabelSelector},
		{"labelSelector mismatch", sel(func(rs *policyv1alpha1.ResourceSelector) { rs.LabelSelector = labels(map[string]string{"app": "api"}) }), PriorityMismatch},
		{"invalid labelSelector", sel(func(rs *policyv1alpha1.ResourceSelector) {
			rs.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
		}), PriorityMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectorPriority(obj, tt.rs); got != tt.want {
				t.Errorf("SelectorPriority(%+v) = %d; want %d", tt.rs, got, tt.want)
			}
		})
	}
	if got := ResourcePriority(obj, tests[0].rs, tests[5].rs, tests[1].rs); got != PriorityName {
		t.Errorf("ResourcePriority(all, name, mismatch) = %d; want the highest, %d", got, PriorityName)
	}
	if MatchesResource(obj) {
		t.Errorf("MatchesResource(no selectors) = true; want false (policies treat empty as all themselves)")
	}
}

func TestMatchesCluster(t *testing.T) {
	expr := func(key string, op corev1.NodeSelectorOperator, values ...string) *policyv1alpha1.FieldSelector {
		return &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	bare := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	tests := []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		affinity policyv1alpha1.ClusterAffinity
		want     bool
	}{
		{"empty affinity matches all", testCluster(), policyv1alpha1.ClusterAffinity{}, true},
		{"clusterNames lists it", testCluster(), policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m0", "m1"}}, true},
		{"clusterNames without it", testCluster(), policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}, false},
		{"exclude wins over clusterNames", testCluster(), policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}, ExcludeClusters: []string{"m1"}}, false},
		{"labelSelector matches", testCluster(), policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, true},
		{"labelSelector mismatch", testCluster(), policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, false},
		{"provider In", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldProvider, corev1.NodeSelectorOpIn, "aws")}, true},
		{"provider NotIn", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldProvider, corev1.NodeSelectorOpNotIn, "aws")}, false},
		{"region In other", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldRegion, corev1.NodeSelectorOpIn, "eu")}, false},
		{"region NotIn on a cluster without region", bare, policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldRegion, corev1.NodeSelectorOpNotIn, "eu")}, true},
		{"zone In overlaps", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpIn, "z2", "z9")}, true},
		{"zone In without overlap", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpIn, "z9")}, false},
		{"zone In on a cluster without zones", bare, policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpIn, "z1")}, false},
		{"zone NotIn listed", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpNotIn, "z1")}, false},
		{"zone NotIn not listed", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpNotIn, "z9")}, true},
		{"zone Exists", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpExists)}, true},
		{"zone DoesNotExist", bare, policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldZone, corev1.NodeSelectorOpDoesNotExist)}, true},
		{"empty fieldSelector matches nothing", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{}}, false},
		{"invalid operator matches nothing", testCluster(), policyv1alpha1.ClusterAffinity{FieldSelector: expr(FieldRegion, "Bogus", "x")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchesCluster(tt.cluster, tt.affinity); got != tt.want {
				t.Errorf("MatchesCluster(%s, %+v) = %t; want %t", tt.cluster.Name, tt.affinity, got, tt.want)
			}
		})
	}
}
