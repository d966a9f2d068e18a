package place

import (
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

// BuildInput is the scheduler's input for a managed binding: its
// placement with API defaults, every member (APIEnabled for the template's
// apiVersion and kind, WorksFull from opts.Full), the workload and the
// binding's previous result. The liveness NoExecute taints are left out
// for a binding that does not fail over (they mean nothing to it); one
// that does gets the default tolerations (Tolerations), as Karmada's
// webhook would have written them into its policy.
func BuildInput(b *workv1alpha1.ResourceBinding, members []Member, opts Options) placement.Input {
	pl := clonePlacement(b.Spec.Placement)
	pl.SetDefaults()
	failover := FailsOver(b, opts)
	if failover {
		pl.ClusterTolerations = Tolerations(pl.ClusterTolerations, opts)
	}
	res := b.Spec.Resource
	key := APIKey(res.APIVersion, res.Kind)
	cs := make([]placement.Cluster, len(members))
	for i := range members {
		cs[i] = members[i].Cluster
		cs[i].Taints = evicting(cs[i].Taints, failover)
		cs[i].APIEnabled = members[i].APIs[key]
		cs[i].WorksFull = opts.Full[cs[i].Name]
	}
	return placement.Input{
		Placement: *pl,
		Clusters:  cs,
		Workload: placement.Workload{
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
		EnableEmptyWorkloadPropagation: opts.EmptyWorkloads,
	}
}

// previous is the binding's last result and what happened since.
func previous(b *workv1alpha1.ResourceBinding) placement.Previous {
	p := placement.Previous{
		ObservedAffinityName: b.Status.SchedulerObservedAffinityName,
		RescheduleTriggered:  placement.RescheduleTriggered(b),
	}
	for _, t := range b.Spec.Clusters {
		p.Clusters = append(p.Clusters, placement.TargetCluster{Name: t.Name, Replicas: t.Replicas})
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		p.EvictingClusters = append(p.EvictingClusters, t.FromCluster)
	}
	return p
}
