package placement

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// freeReplicas is how many more replicas of w the cluster can take
// (Karmada's AllocatableReplicas): the minimum over the estimators that
// answer, or w.Replicas when none bounds it.
func freeReplicas(c *Cluster, w *Workload) int64 {
	// Not a workload: no estimation at all.
	if w.Replicas == 0 && w.Components == 0 {
		return int64(w.Replicas)
	}
	est := int64(math.MaxInt32)
	// A negative external estimate means "no answer" (Karmada's -1).
	if c.AvailableReplicas != nil && *c.AvailableReplicas >= 0 {
		est = min(est, int64(*c.AvailableReplicas))
	}
	// The general estimator runs unless only an external estimate exists.
	if c.ResourceSummary != nil || c.AvailableReplicas == nil {
		est = min(est, summaryReplicas(c, w.Requirements))
	}
	if est == math.MaxInt32 {
		return int64(w.Replicas)
	}
	return est
}

// summaryReplicas is Karmada's general estimator over the reported
// resource summary; no summary means 0.
func summaryReplicas(c *Cluster, req *configv1alpha1.ReplicaRequirements) int64 {
	s := c.ResourceSummary
	if s == nil {
		return 0
	}
	pods := allowedPods(s)
	if pods <= 0 {
		return 0
	}
	if req == nil {
		return pods
	}
	if len(s.AllocatableModelings) > 0 {
		if n, ok := modelReplicas(c, req.ResourceRequest); ok {
			return min(pods, n)
		}
	}
	return min(pods, freeResourceReplicas(s, req.ResourceRequest))
}

// allowedPods is allocatable - allocated - allocating pods, at least 0.
func allowedPods(s *clusterv1alpha1.ResourceSummary) int64 {
	n := s.Allocatable.Pods().Value() - s.Allocated.Pods().Value() - s.Allocating.Pods().Value()
	return max(n, 0)
}

// freeResourceReplicas divides each requested resource's free amount by
// the request: CPU in millicores, everything else in whole units.
func freeResourceReplicas(s *clusterv1alpha1.ResourceSummary, request corev1.ResourceList) int64 {
	n := int64(math.MaxInt64)
	for name, want := range request {
		if want.Value() <= 0 {
			continue
		}
		free, ok := s.Allocatable[name]
		if !ok {
			return 0
		}
		free = free.DeepCopy()
		if q, ok := s.Allocated[name]; ok {
			free.Sub(q)
		}
		if q, ok := s.Allocating[name]; ok {
			free.Sub(q)
		}
		if free.Value() <= 0 {
			return 0
		}
		n = min(n, divide(free, want, name))
	}
	return n
}

// divide is how many times want fits in have.
func divide(have, want resource.Quantity, name corev1.ResourceName) int64 {
	if name == corev1.ResourceCPU {
		return have.MilliValue() / want.MilliValue()
	}
	return have.Value() / want.Value()
}

// modelReplicas estimates from the cluster's node grades: the smallest
// grade whose minimum satisfies every request, then for each grade from
// there, node count × replicas that fit the grade's minimum (at least 1).
// ok is false when a requested resource has no model.
func modelReplicas(c *Cluster, request corev1.ResourceList) (n int64, ok bool) {
	mins := map[corev1.ResourceName][]resource.Quantity{}
	for _, m := range c.ResourceModels {
		for _, r := range m.Ranges {
			mins[r.Name] = append(mins[r.Name], r.Min)
		}
	}
	first, requested := 0, false
	for name, want := range request {
		if want.Value() <= 0 {
			continue
		}
		requested = true
		grades, has := mins[name]
		if !has {
			return 0, false
		}
		idx := firstGradeFitting(grades, want)
		if idx < 0 {
			return 0, true
		}
		first = max(first, idx)
	}
	if !requested {
		return math.MaxInt64, true
	}
	counts := c.ResourceSummary.AllocatableModelings
	for i := first; i < len(c.ResourceModels) && i < len(counts); i++ {
		if counts[i].Count > 0 {
			n += int64(counts[i].Count) * gradeReplicas(i, request, mins)
		}
	}
	return n, true
}

// firstGradeFitting is the index of the first grade minimum ≥ want, or -1.
func firstGradeFitting(grades []resource.Quantity, want resource.Quantity) int {
	for i, q := range grades {
		if q.Cmp(want) >= 0 {
			return i
		}
	}
	return -1
}

// gradeReplicas is how many replicas one node of grade i holds; a grade
// chosen as fitting holds at least one.
func gradeReplicas(i int, request corev1.ResourceList, mins map[corev1.ResourceName][]resource.Quantity) int64 {
	n := int64(math.MaxInt64)
	for name, want := range request {
		if want.Value() <= 0 || i >= len(mins[name]) {
			continue
		}
		n = min(n, divide(mins[name][i], want, name))
	}
	return max(n, 1)
}
