package placement

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

func TestAdmits(t *testing.T) {
	prod := &Cluster{Name: "p1", Labels: map[string]string{"env": "prod"}}
	dev := &Cluster{Name: "d1", Labels: map[string]string{"env": "dev"}}
	burst := &Cluster{Name: "b1", Labels: map[string]string{"env": "burst"}}
	labels := func(env string) policyv1alpha1.ClusterAffinity {
		return policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": env}}}
	}
	prodOnly := labels("prod")
	terms := &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "first", ClusterAffinity: labels("prod"),
			OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{ClusterAffinity: labels("burst")}}},
		{AffinityName: "second", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"x1"}}},
	}}
	for _, tc := range []struct {
		name string
		p    *policyv1alpha1.Placement
		c    *Cluster
		want bool
	}{
		{"no affinity admits every cluster", &policyv1alpha1.Placement{}, dev, true},
		{"clusterAffinity admits a match", &policyv1alpha1.Placement{ClusterAffinity: &prodOnly}, prod, true},
		{"clusterAffinity excludes the rest", &policyv1alpha1.Placement{ClusterAffinity: &prodOnly}, dev, false},
		{"a term", terms, prod, true},
		{"an overflow affinity", terms, burst, true},
		{"a later term", terms, &Cluster{Name: "x1"}, true},
		{"no term", terms, dev, false},
	} {
		if got := Admits(tc.p, tc.c); got != tc.want {
			t.Errorf("%s: Admits = %v; want %v", tc.name, got, tc.want)
		}
	}
}
