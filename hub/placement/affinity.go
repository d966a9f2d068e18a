package placement

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// clusterMatches is Karmada's util.ClusterMatches, shared with the override
// engine (overrides.MatchesCluster): not excluded, labels match, fields
// match and, when clusterNames is set, listed by name. A cluster with only
// the deprecated single zone is matched as having zones [zone] (README).
func clusterMatches(c *Cluster, a *policyv1alpha1.ClusterAffinity) bool {
	return overrides.MatchesCluster(&clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: c.Labels},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: c.Provider, Region: c.Region, Zones: zonesOf(c)},
	}, *a)
}
