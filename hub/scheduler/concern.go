package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

// change is one cluster that differs between two snapshots; old is nil
// when it joined, cur when it left.
type change struct {
	old, cur *Member
}

// changes are the clusters that differ between two snapshots, by name.
type changes map[string]change

// membersDiff compares two snapshots sorted by name: shape holds the
// clusters that joined, left or changed anything but capacity, capacity
// those whose capacity alone changed (placement.Cluster.ResourceSummary
// and AvailableReplicas). A cluster in both that rebuilt does not name
// (memberCache.build) is the same; nil rebuilt compares all. It compares
// values, not encodings: with 10,000 clusters, encoding both snapshots on
// every lease change took most of the loop's time.
func membersDiff(old, cur []Member, rebuilt map[string]bool) (shape, capacity changes) {
	shape, capacity = changes{}, changes{}
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i].Cluster.Name < cur[j].Cluster.Name):
			shape[old[i].Cluster.Name] = change{old: &old[i]}
			i++
		case i == len(old) || cur[j].Cluster.Name < old[i].Cluster.Name:
			shape[cur[j].Cluster.Name] = change{cur: &cur[j]}
			j++
		default:
			a, b := &old[i], &cur[j]
			switch {
			case rebuilt != nil && !rebuilt[b.Cluster.Name]:
			case !equality.Semantic.DeepEqual(withoutCapacity(*a), withoutCapacity(*b)):
				shape[b.Cluster.Name] = change{a, b}
			case !sameCapacity(&a.Cluster, &b.Cluster):
				capacity[b.Cluster.Name] = change{a, b}
			}
			i, j = i+1, j+1
		}
	}
	return shape, capacity
}

// sameCapacity reports whether a and b report the same capacity, as
// equality.Semantic would (quantities by value, nil and empty alike),
// without reflection: it runs for every cluster on every lease change.
func sameCapacity(a, b *placement.Cluster) bool {
	x, y := a.AvailableReplicas, b.AvailableReplicas
	if (x == nil) != (y == nil) || (x != nil && *x != *y) {
		return false
	}
	return sameSummary(a.ResourceSummary, b.ResourceSummary)
}

func sameSummary(a, b *clusterv1alpha1.ResourceSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameResources(a.Allocatable, b.Allocatable) && sameResources(a.Allocating, b.Allocating) &&
		sameResources(a.Allocated, b.Allocated) && slices.Equal(a.AllocatableModelings, b.AllocatableModelings)
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		r, ok := b[name]
		if !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// withoutCapacity is m without its capacity (placement.Cluster's
// ResourceSummary and AvailableReplicas).
func withoutCapacity(m Member) Member {
	m.Cluster.ResourceSummary, m.Cluster.AvailableReplicas = nil, nil
	return m
}

// concerns reports whether a change of the clusters in cs can change what
// Step decides for b. Step reads the clusters b names (its targets, the
// clusters its eviction tasks leave: taints, liveness, whether they
// exist) and, when b is scheduled again (placement.NeedsSchedule), the
// clusters its placement admits (placement.Admits). A binding whose last
// scheduling did not succeed is concerned by every change: its recorded
// failure counts all clusters. Any other change would be decided by Step
// to leave b as it is, so it is not looked at, as Karmada's scheduler
// does not requeue it.
func concerns(b *workv1alpha1.ResourceBinding, cs changes) bool {
	if len(cs) == 0 || !placement.Managed(b) {
		return false
	}
	if !meta.IsStatusConditionTrue(b.Status.Conditions, placement.ConditionScheduled) {
		return true
	}
	for _, t := range b.Spec.Clusters {
		if _, ok := cs[t.Name]; ok {
			return true
		}
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		if _, ok := cs[t.FromCluster]; ok {
			return true
		}
	}
	// The targets are all looked at above: whether they exist decides
	// nothing more.
	if placement.NeedsSchedule(b, func(string) bool { return true }) == placement.ReasonNone {
		return false
	}
	p := b.Spec.Placement
	if p.ClusterAffinity == nil && len(p.ClusterAffinities) == 0 {
		return true
	}
	for _, c := range cs {
		if (c.old != nil && placement.Admits(p, &c.old.Cluster)) || (c.cur != nil && placement.Admits(p, &c.cur.Cluster)) {
			return true
		}
	}
	return false
}
