package placement

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// ReasonEviction is the ClusterEviction filter's reason, with Karmada's
// wording: the cluster has a graceful eviction task. Exported so that the
// scheduling loop can drop it from recorded rejections once the task ends.
const ReasonEviction = "cluster(s) is in the process of eviction"

// Filter reasons, with Karmada's wording so that messages read the same.
const (
	reasonAffinity = "cluster(s) did not match the placement cluster affinity constraint"
	reasonAPI      = "cluster(s) did not have the API resource"
	reasonEviction = ReasonEviction
	// reasonWorksFull is Tether's own.
	reasonWorksFull = "cluster(s) had reached the hub's limit of works per cluster"
)

// affinitySet is the cluster affinity in force: the placement's
// clusterAffinity, or the observed clusterAffinities term plus (for
// workloads) its overflow affinities. A cluster matches if any does; nil
// primary and no overflow match every cluster.
type affinitySet struct {
	primary  *policyv1alpha1.ClusterAffinity
	overflow []policyv1alpha1.ClusterAffinity
}

// overflowUnmatched is the overflow order of a cluster no affinity of the
// set matches (Karmada's value; such clusters are filtered out anyway).
const overflowUnmatched = 1000

// order is 0 for the primary affinity, i for the i-th overflow affinity.
func (a affinitySet) order(c *Cluster) int {
	if a.primary == nil || clusterMatches(c, a.primary) {
		return 0
	}
	for i := range a.overflow {
		if clusterMatches(c, &a.overflow[i]) {
			return i + 1
		}
	}
	return overflowUnmatched
}

// filterClusters runs every filter on every cluster that is not being
// deleted and returns the feasible ones in input order with the rejected
// ones and all their reasons.
func filterClusters(in *Input, aff affinitySet) (feasible []*Cluster, rejected []Rejection) {
	prev := make(map[string]bool, len(in.Previous.Clusters))
	for _, t := range in.Previous.Clusters {
		prev[t.Name] = true
	}
	for i := range in.Clusters {
		c := &in.Clusters[i]
		if c.Deleting {
			continue
		}
		if reasons := filterReasons(in, aff, c, prev[c.Name]); len(reasons) > 0 {
			rejected = append(rejected, Rejection{Cluster: c.Name, Reasons: reasons})
			continue
		}
		feasible = append(feasible, c)
	}
	return feasible, rejected
}

// filterReasons runs the filters in a fixed order: affinity, taints, API,
// works limit, spread-constraint properties, eviction. The first reason is the one a
// FitError counts (Karmada runs them in map order, so it may count a
// different one for a cluster failing several).
func filterReasons(in *Input, aff affinitySet, c *Cluster, scheduled bool) []string {
	var reasons []string
	if aff.order(c) == overflowUnmatched {
		reasons = append(reasons, reasonAffinity)
	}
	// Clusters already in the result bypass the taint, API and works
	// limit filters.
	if !scheduled {
		if t := untoleratedTaint(c.Taints, in.Placement.ClusterTolerations); t != nil {
			reasons = append(reasons, fmt.Sprintf("cluster(s) had untolerated taint {%s}", t.ToString()))
		}
		if !c.APIEnabled {
			reasons = append(reasons, reasonAPI)
		}
		if c.WorksFull {
			reasons = append(reasons, reasonWorksFull)
		}
	}
	if field := missingSpreadProperty(in.Placement.SpreadConstraints, c); field != "" {
		reasons = append(reasons, fmt.Sprintf("cluster(s) did not have %s property", field))
	}
	if slices.Contains(in.Previous.EvictingClusters, c.Name) {
		reasons = append(reasons, reasonEviction)
	}
	return reasons
}

// untoleratedTaint returns the first NoSchedule or NoExecute taint no
// toleration tolerates; PreferNoSchedule never filters.
func untoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration) *corev1.Taint {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return Tolerates(&tol, t) }) {
			return t
		}
	}
	return nil
}

// Tolerates says whether tol tolerates taint by Karmada v1.18's rules,
// those of Kubernetes v1.34: the Lt and Gt operators (Kubernetes v1.35's
// TaintTolerationComparisonOperators) tolerate nothing.
func Tolerates(tol *corev1.Toleration, taint *corev1.Taint) bool {
	return tol.ToleratesTaint(logr.Discard(), taint, false)
}

// missingSpreadProperty names the first topology property a provider,
// region or zone spread constraint needs and the cluster lacks.
func missingSpreadProperty(constraints []policyv1alpha1.SpreadConstraint, c *Cluster) string {
	for _, sc := range constraints {
		switch {
		case sc.SpreadByField == policyv1alpha1.SpreadByFieldProvider && c.Provider == "":
			return "provider"
		case sc.SpreadByField == policyv1alpha1.SpreadByFieldRegion && c.Region == "":
			return "region"
		case sc.SpreadByField == policyv1alpha1.SpreadByFieldZone && len(zonesOf(c)) == 0:
			return "zones"
		}
	}
	return ""
}

// zonesOf is the cluster's zones, falling back to the deprecated single
// zone when Zones is empty.
func zonesOf(c *Cluster) []string {
	if len(c.Zones) == 0 && c.Zone != "" {
		return []string{c.Zone}
	}
	return c.Zones
}
