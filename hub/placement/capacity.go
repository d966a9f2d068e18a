package placement

import (
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// ReadsCapacity reports whether Schedule's result for placement p and a
// workload of replicas can depend on the clusters' capacity
// (Cluster.ResourceSummary and AvailableReplicas), all else equal: spread
// constraints that are not ignored (selection orders the candidates by
// available replicas), overflow affinities (each tier takes what it can
// hold), or a Divided workload divided by capacity (Aggregated, dynamic
// weights). Duplicated and non-workload placements without those, and
// static weights without overflow, never read capacity. Filters never do.
func ReadsCapacity(p *policyv1alpha1.Placement, replicas int32) bool {
	if p == nil {
		return false
	}
	if len(p.SpreadConstraints) > 0 && !ignoresSpread(p) {
		return true
	}
	for i := range p.ClusterAffinities {
		if len(p.ClusterAffinities[i].OverflowAffinities) > 0 {
			return true
		}
	}
	if replicas <= 0 {
		return false
	}
	s, ok := strategyOf(p.ReplicaScheduling)
	return !ok || s == aggregated || s == dynamicWeight
}

// CapacityBound reports whether a change of nothing but the clusters'
// capacity can change what the scheduling loop decides for b: b is
// managed and NeedsSchedule schedules it, either for a reason of its own
// (never scheduled, placement or replicas changed, a reschedule asked, a
// target gone: a decision that failed for lack of capacity is retried
// when capacity changes) or because it follows every cluster change
// (ReasonAlways) and its placement reads capacity (ReadsCapacity). A
// scheduled Divided binding is not rebalanced when capacity changes, as in
// Karmada, so it is not bound. exists is NeedsSchedule's.
func CapacityBound(b *workv1alpha1.ResourceBinding, exists func(name string) bool) bool {
	if !Managed(b) {
		return false
	}
	switch NeedsSchedule(b, exists) {
	case ReasonNone:
		return false
	case ReasonAlways:
		return ReadsCapacity(b.Spec.Placement, b.Spec.Replicas)
	}
	return true
}
