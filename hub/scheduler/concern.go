package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
)

// change is one cluster that differs between two snapshots; old is nil
// when it joined, cur when it left.
type change struct {
	old, cur *place.Member
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
func membersDiff(old, cur []place.Member, rebuilt map[string]bool) (shape, capacity changes) {
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
func withoutCapacity(m place.Member) place.Member {
	m.Cluster.ResourceSummary, m.Cluster.AvailableReplicas = nil, nil
	return m
}

// interest is what decides which cluster changes concern a binding
// (concerns), derived once per cached version of it (entry.interest):
// markConcerned asks it of every binding on every member change.
type interest struct {
	// none: not managed, Step leaves it alone; all: its last scheduling
	// did not succeed, and its recorded failure counts all clusters.
	none, all bool
	// named are the clusters b names (its targets, the clusters its
	// eviction tasks leave), sorted.
	named []string
	// follows: b is scheduled again on a cluster change
	// (placement.NeedsSchedule with every target present).
	follows bool
}

// interestOf derives b's interest.
func interestOf(b *workv1alpha1.ResourceBinding) *interest {
	if !placement.Managed(b) {
		return &interest{none: true}
	}
	if !meta.IsStatusConditionTrue(b.Status.Conditions, placement.ConditionScheduled) {
		return &interest{all: true}
	}
	in := &interest{named: make([]string, 0, len(b.Spec.Clusters)+len(b.Spec.GracefulEvictionTasks))}
	for _, t := range b.Spec.Clusters {
		in.named = append(in.named, t.Name)
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		in.named = append(in.named, t.FromCluster)
	}
	slices.Sort(in.named)
	// Whether the targets exist is looked at through named.
	in.follows = placement.NeedsSchedule(b, func(string) bool { return true }) != placement.ReasonNone
	return in
}

// names reports whether the binding names a cluster in cs.
func (in *interest) names(cs changes) bool {
	if len(cs) < len(in.named) {
		for name := range cs {
			if _, ok := slices.BinarySearch(in.named, name); ok {
				return true
			}
		}
		return false
	}
	for _, name := range in.named {
		if _, ok := cs[name]; ok {
			return true
		}
	}
	return false
}

// concerns reports whether a change of the clusters in cs can change what
// Step decides for a binding with interest in and placement p. Step reads
// the clusters the binding names (their taints, liveness, whether they
// exist) and, when it is scheduled again (placement.NeedsSchedule), the
// clusters its placement admits (placement.Admits). A binding whose last
// scheduling did not succeed is concerned by every change. Any other
// change would be decided by Step to leave the binding as it is, so it is
// not looked at, as Karmada's scheduler does not requeue it.
func concerns(in *interest, p *policyv1alpha1.Placement, cs changes) bool {
	switch {
	case len(cs) == 0 || in.none:
		return false
	case in.all || in.names(cs):
		return true
	case !in.follows:
		return false
	case p.ClusterAffinity == nil && len(p.ClusterAffinities) == 0:
		return true
	}
	for _, c := range cs {
		if (c.old != nil && placement.Admits(p, &c.old.Cluster)) || (c.cur != nil && placement.Admits(p, &c.cur.Cluster)) {
			return true
		}
	}
	return false
}
