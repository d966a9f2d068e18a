package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RefuseUnsupported reports the fields of a PropagationSpec that Karmada
// v1.18 accepts and Tether does not implement, each by its path and why, so
// that a policy that uses one is refused at apply instead of being stored
// and silently ignored:
//   - failover.application.statePreservation: state preservation on
//     application failover (application failover itself is supported);
//   - failover.cluster.purgeMode Directly: cluster
//     failover always purges gracefully;
//   - failover.cluster.statePreservation;
//   - placement.workloadAffinity;
//   - schedulePriority;
//   - a schedulerName other than default-scheduler: Tether has one
//     scheduler, and a binding for another would never be placed.
//
// failover.cluster with purgeMode Gracefully (its default) is supported.
// The result is the same before and after SetDefaults.
func RefuseUnsupported(s *PropagationSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := s.SchedulerName; n != "" && n != DefaultSchedulerName {
		errs = append(errs, field.Invalid(path.Child("schedulerName"), n,
			"Tether has one scheduler, "+DefaultSchedulerName+"; a policy for another scheduler would never be placed: remove the field or set "+DefaultSchedulerName))
	}
	if s.Placement.WorkloadAffinity != nil {
		errs = append(errs, notYet(path.Child("placement", "workloadAffinity"), "workload affinity groups"))
	}
	if s.SchedulePriority != nil {
		errs = append(errs, notYet(path.Child("schedulePriority"), "priority-based scheduling order and preemption"))
	}
	if s.Failover == nil {
		return errs
	}
	fpath := path.Child("failover")
	if a := s.Failover.Application; a != nil && a.StatePreservation != nil {
		errs = append(errs, notYet(fpath.Child("application", "statePreservation"),
			"state preservation on failover; application failover without it is supported"))
	}
	if c := s.Failover.Cluster; c != nil {
		cpath := fpath.Child("cluster")
		if c.PurgeMode == PurgeModeDirectly { // Immediately is refused by Karmada's enum
			errs = append(errs, field.Invalid(cpath.Child("purgeMode"), c.PurgeMode,
				"not supported by Tether: cluster failover keeps the old cluster's copy until the replacement is healthy or the grace period ends; remove the field or set Gracefully"))
		}
		if c.StatePreservation != nil {
			errs = append(errs, notYet(cpath.Child("statePreservation"), "state preservation on failover"))
		}
	}
	return errs
}

// notYet is the refusal of a field Tether does not implement.
func notYet(path *field.Path, what string) *field.Error {
	return field.Forbidden(path, "not supported by Tether yet ("+what+"); remove it (see the README's Karmada comparison)")
}
