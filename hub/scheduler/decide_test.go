package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

func TestNeedsSchedule(t *testing.T) {
	live := map[string]bool{"m1": true, "m2": true, "m3": true}
	exists := func(n string) bool { return live[n] }
	affinities := func(names ...string) *policyv1alpha1.Placement {
		p := dividedStatic("m1", "m2")
		for _, n := range names {
			p.ClusterAffinities = append(p.ClusterAffinities, policyv1alpha1.ClusterAffinityTerm{AffinityName: n,
				ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}})
		}
		return p
	}
	tests := []struct {
		name string
		b    func() *workv1alpha1.ResourceBinding
		want placement.Reason
	}{
		{"never scheduled", func() *workv1alpha1.ResourceBinding { return binding(dividedStatic("m1"), 2) }, placement.ReasonNew},
		{"nothing changed (Divided)", func() *workv1alpha1.ResourceBinding {
			return scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1)))
		}, placement.ReasonNone},
		{"placement changed", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1)))
			b.Spec.Placement.ClusterTolerations = append(b.Spec.Placement.ClusterTolerations, noExecuteToleration("k", nil))
			return b
		}, placement.ReasonPlacementChanged},
		{"unobserved clusterAffinities term changed: not a change", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(affinities("a", "b"), 2, tc("m1", 2)))
			b.Status.SchedulerObservedAffinityName = "a"
			b.Spec.Placement.ClusterAffinities[1].ClusterNames = []string{"m3"}
			return b
		}, placement.ReasonNone},
		{"observed clusterAffinities term changed", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(affinities("a", "b"), 2, tc("m1", 2)))
			b.Status.SchedulerObservedAffinityName = "a"
			b.Spec.Placement.ClusterAffinities[0].ClusterNames = []string{"m3"}
			return b
		}, placement.ReasonPlacementChanged},
		{"scaled up", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1)))
			b.Spec.Replicas = 4
			return b
		}, placement.ReasonReplicasChanged},
		{"evicted cluster leaves the sum short", func() *workv1alpha1.ResourceBinding {
			return scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1)))
		}, placement.ReasonReplicasChanged},
		{"reschedule triggered after the last schedule", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1)))
			b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0.Add(time.Minute)}
			return b
		}, placement.ReasonRescheduleTriggered},
		{"reschedule triggered before the last schedule", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1)))
			b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0.Add(-time.Minute)}
			return b
		}, placement.ReasonNone},
		{"Duplicated: every time", func() *workv1alpha1.ResourceBinding {
			return scheduled(binding(duplicated(), 2, tc("m1", 2)))
		}, placement.ReasonAlways},
		{"non-workload: every time", func() *workv1alpha1.ResourceBinding {
			return scheduled(binding(dividedStatic("m1"), 0, tc("m1", 0)))
		}, placement.ReasonAlways},
		{"target cluster gone", func() *workv1alpha1.ResourceBinding {
			return scheduled(binding(dividedStatic("m1", "m9"), 2, tc("m1", 1), tc("m9", 1)))
		}, placement.ReasonClusterGone},
		{"unreadable applied placement", func() *workv1alpha1.ResourceBinding {
			b := scheduled(binding(dividedStatic("m1"), 1, tc("m1", 1)))
			b.Annotations[placement.AnnotationAppliedPlacement] = "{"
			return b
		}, placement.ReasonPlacementChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := placement.NeedsSchedule(tt.b(), exists); got != tt.want {
				t.Errorf("NeedsSchedule = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestManaged(t *testing.T) {
	yes := true
	tests := []struct {
		name   string
		modify func(*workv1alpha1.ResourceBinding)
		want   bool
	}{
		{"policy binding", func(*workv1alpha1.ResourceBinding) {}, true},
		{"dependency binding (no placement)", func(b *workv1alpha1.ResourceBinding) { b.Spec.Placement = nil }, false},
		{"default scheduler by name", func(b *workv1alpha1.ResourceBinding) { b.Spec.SchedulerName = policyv1alpha1.DefaultSchedulerName }, true},
		{"another scheduler", func(b *workv1alpha1.ResourceBinding) { b.Spec.SchedulerName = "other" }, false},
		{"scheduling suspended", func(b *workv1alpha1.ResourceBinding) {
			b.Spec.Suspension = &workv1alpha1.Suspension{Scheduling: &yes}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := binding(duplicated(), 1)
			tt.modify(b)
			if got := placement.Managed(b); got != tt.want {
				t.Errorf("Managed = %v; want %v", got, tt.want)
			}
		})
	}
}
