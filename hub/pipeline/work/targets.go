package work

import (
	"slices"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Targets returns the clusters the binding's template goes to: the
// scheduler's result (spec.clusters), then the clusters of the bindings
// that require it as a dependency (spec.requiredBy) that are not already
// there, as Karmada's mergeTargetClusters. An attached binding (a
// dependency no policy claims) has only the latter.
func Targets(b *workv1alpha1.ResourceBinding) []workv1alpha1.TargetCluster {
	out := slices.Clone(b.Spec.Clusters)
	seen := make(map[string]bool, len(out))
	for _, c := range out {
		seen[c.Name] = true
	}
	for _, rb := range b.Spec.RequiredBy {
		for _, c := range rb.Clusters {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// ReplicasFor returns the cluster's replicas in the binding's result and
// whether the binding targets the cluster at all.
func ReplicasFor(b *workv1alpha1.ResourceBinding, cluster string) (int32, bool) {
	for _, c := range b.Spec.Clusters {
		if c.Name == cluster {
			return c.Replicas, true
		}
	}
	for _, rb := range b.Spec.RequiredBy {
		for _, c := range rb.Clusters {
			if c.Name == cluster {
				return c.Replicas, true
			}
		}
	}
	return 0, false
}

// Suspended reports whether dispatching to cluster is suspended: the
// cluster keeps the work it has (if any), unchanged, as a Karmada Work with
// suspendDispatching is never applied.
func Suspended(b *workv1alpha1.ResourceBinding, cluster string) bool {
	s := b.Spec.Suspension
	if s == nil {
		return false
	}
	if s.Dispatching != nil && *s.Dispatching {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}

// Evicting reports whether the binding is gracefully leaving cluster: the
// cluster keeps the work it has, unchanged, until the eviction task ends
// (Karmada keeps the Works of a graceful eviction's source cluster).
func Evicting(b *workv1alpha1.ResourceBinding, cluster string) bool {
	for _, t := range b.Spec.GracefulEvictionTasks {
		if t.FromCluster == cluster {
			return true
		}
	}
	return false
}
