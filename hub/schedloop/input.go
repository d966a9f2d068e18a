package schedloop

import (
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/scheduler"
)

// BuildInput is the scheduler's input for a managed binding: its
// placement with API defaults, every member (APIEnabled for the template's
// apiVersion and kind), the workload and the binding's previous result.
func BuildInput(b *workv1alpha1.ResourceBinding, members []Member, emptyWorkloads bool) scheduler.Input {
	placement := clonePlacement(b.Spec.Placement)
	placement.SetDefaults()
	res := b.Spec.Resource
	key := apiKey(res.APIVersion, res.Kind)
	cs := make([]scheduler.Cluster, len(members))
	for i := range members {
		cs[i] = members[i].Cluster
		cs[i].APIEnabled = members[i].APIs[key]
	}
	return scheduler.Input{
		Placement: *placement,
		Clusters:  cs,
		Workload: scheduler.Workload{
			APIVersion:   res.APIVersion,
			Kind:         res.Kind,
			Namespace:    res.Namespace,
			Name:         res.Name,
			UID:          string(res.UID),
			Replicas:     b.Spec.Replicas,
			Requirements: b.Spec.ReplicaRequirements,
			Components:   len(b.Spec.Components),
		},
		Previous:                       previous(b),
		EnableEmptyWorkloadPropagation: emptyWorkloads,
	}
}

// previous is the binding's last result and what happened since.
func previous(b *workv1alpha1.ResourceBinding) scheduler.Previous {
	p := scheduler.Previous{
		ObservedAffinityName: b.Status.SchedulerObservedAffinityName,
		RescheduleTriggered:  rescheduleTriggered(b),
	}
	for _, t := range b.Spec.Clusters {
		p.Clusters = append(p.Clusters, scheduler.TargetCluster{Name: t.Name, Replicas: t.Replicas})
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		p.EvictingClusters = append(p.EvictingClusters, t.FromCluster)
	}
	return p
}
