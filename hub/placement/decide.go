package placement

import (
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Reason says why a binding is (re)scheduled; ReasonNone leaves it as it
// is. The reasons are checked in this order (scheduler spec §3) and the
// first that holds wins.
type Reason string

// Reasons to schedule.
const (
	ReasonNone Reason = ""
	// ReasonNew: never scheduled (no applied-placement record).
	ReasonNew Reason = "New"
	// ReasonPlacementChanged: the placement differs from the applied one.
	ReasonPlacementChanged Reason = "PlacementChanged"
	// ReasonReplicasChanged: the assigned replicas do not add up to
	// spec.replicas (a scale, or an eviction that removed a cluster).
	ReasonReplicasChanged Reason = "ReplicasChanged"
	// ReasonRescheduleTriggered: rescheduleTriggeredAt > lastScheduledTime.
	ReasonRescheduleTriggered Reason = "RescheduleTriggered"
	// ReasonAlways: Duplicated and non-workload bindings follow every
	// cluster change.
	ReasonAlways Reason = "DuplicatedOrNonWorkload"
	// ReasonClusterGone: a target cluster is being deleted or no longer
	// exists.
	ReasonClusterGone Reason = "TargetClusterGone"
)

// Managed reports whether the loop schedules b at all: dependency bindings
// (no placement, attached through requiredBy), bindings for another
// scheduler and bindings with scheduling suspended are left alone.
func Managed(b *workv1alpha1.ResourceBinding) bool {
	if b.Spec.Placement == nil || b.DeletionTimestamp != nil {
		return false
	}
	if n := b.Spec.SchedulerName; n != "" && n != policyv1alpha1.DefaultSchedulerName {
		return false
	}
	s := b.Spec.Suspension
	return s == nil || s.Scheduling == nil || !*s.Scheduling
}

// NeedsSchedule decides whether a managed binding is scheduled now (spec
// §3). exists reports whether a cluster is in the snapshot and not being
// deleted. It is pure: the same binding and clusters give the same answer,
// which is what keeps a restarted loop from rescheduling anything.
func NeedsSchedule(b *workv1alpha1.ResourceBinding, exists func(name string) bool) Reason {
	applied, ok, err := AppliedPlacement(b)
	switch {
	case !ok:
		return ReasonNew
	case err != nil || placementChanged(b.Spec.Placement, applied, b.Status.SchedulerObservedAffinityName):
		return ReasonPlacementChanged
	case replicasChanged(&b.Spec):
		return ReasonReplicasChanged
	case RescheduleTriggered(b):
		return ReasonRescheduleTriggered
	case b.Spec.Replicas == 0 || b.Spec.Placement.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDuplicated:
		return ReasonAlways
	}
	for _, t := range b.Spec.Clusters {
		if !exists(t.Name) {
			return ReasonClusterGone
		}
	}
	return ReasonNone
}

// placementChanged compares what the scheduler depends on; with
// clusterAffinities only the observed term is compared (Karmada's
// placementChanged).
func placementChanged(cur, applied *policyv1alpha1.Placement, observed string) bool {
	if jsonString(cur.ClusterAffinity) != jsonString(applied.ClusterAffinity) ||
		jsonString(cur.ClusterTolerations) != jsonString(applied.ClusterTolerations) ||
		jsonString(cur.SpreadConstraints) != jsonString(applied.SpreadConstraints) ||
		jsonString(cur.ReplicaScheduling) != jsonString(applied.ReplicaScheduling) {
		return true
	}
	if len(cur.ClusterAffinities) == 0 && len(applied.ClusterAffinities) == 0 {
		return false
	}
	a, b := term(cur.ClusterAffinities, observed), term(applied.ClusterAffinities, observed)
	return a == nil || b == nil || jsonString(a) != jsonString(b)
}

// term is the clusterAffinities term named name (the first one when no
// term is observed yet), or nil.
func term(terms []policyv1alpha1.ClusterAffinityTerm, name string) *policyv1alpha1.ClusterAffinityTerm {
	for i := range terms {
		if terms[i].AffinityName == name || name == "" {
			return &terms[i]
		}
	}
	return nil
}

// replicasChanged is Karmada's IsBindingReplicasChanged.
func replicasChanged(s *workv1alpha1.ResourceBindingSpec) bool {
	if s.Placement.ReplicaScheduling == nil {
		return false
	}
	if s.Placement.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		for _, t := range s.Clusters {
			if t.Replicas != s.Replicas {
				return true
			}
		}
		return false
	}
	var sum int32
	for _, t := range s.Clusters {
		sum += t.Replicas
	}
	return sum != s.Replicas
}

// RescheduleTriggered reports an explicit reschedule after the last schedule.
func RescheduleTriggered(b *workv1alpha1.ResourceBinding) bool {
	at := b.Spec.RescheduleTriggeredAt
	if at == nil {
		return false
	}
	last := b.Status.LastScheduledTime
	return last == nil || at.After(last.Time)
}
