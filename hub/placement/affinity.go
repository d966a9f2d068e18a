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

// Admits reports whether p's cluster affinity can select c: its
// clusterAffinity, or any clusterAffinities term or overflow affinity of
// one; no affinity admits every cluster. Schedule's filters reject a
// cluster the affinity in force does not admit before anything else looks
// at it, so a change to a cluster that p admits neither before nor after
// cannot change a successful result; only a failure's message (a
// FitError counts all clusters) and the rejections listed with a result
// see it. Karmada's scheduler likewise requeues on a cluster change only
// the bindings whose affinity matches the cluster
// (enqueueAffectedBindings).
func Admits(p *policyv1alpha1.Placement, c *Cluster) bool {
	if len(p.ClusterAffinities) == 0 {
		return p.ClusterAffinity == nil || clusterMatches(c, p.ClusterAffinity)
	}
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		if clusterMatches(c, &term.ClusterAffinity) {
			return true
		}
		for j := range term.OverflowAffinities {
			if clusterMatches(c, &term.OverflowAffinities[j].ClusterAffinity) {
				return true
			}
		}
	}
	return false
}
