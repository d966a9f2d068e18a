package place

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

// failedOver is a binding whose replicas all went to m2 while m1 was
// away (its policy weighs m1 and m2 alike), now asked to reschedule.
func failedOver() *workv1alpha1.ResourceBinding {
	b := scheduled(binding(dividedStatic("m1", "m2"), 4, tc("m2", 4)))
	b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0.Add(time.Minute)}
	return b
}

func health(b *workv1alpha1.ResourceBinding, h map[string]configv1alpha1.ResourceHealth) *workv1alpha1.ResourceBinding {
	nb := CloneBinding(b)
	nb.Status.AggregatedStatus = nil
	for c, v := range h {
		nb.Status.AggregatedStatus = append(nb.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{ClusterName: c, Health: v})
	}
	return nb
}

// A triggered reschedule that takes replicas off m2 keeps them there
// until m1's new copies are Healthy: the ready replicas never drop.
func TestRebalanceKeepsOldCopiesUntilNewAreHealthy(t *testing.T) {
	members := []Member{ready("m1"), ready("m2")}
	opts := Options{EvictionTimeout: 10 * time.Minute}
	now := t0.Add(2 * time.Minute)

	out := Step(failedOver(), members, now, opts)
	if out.Reason != placement.ReasonRescheduleTriggered || out.Err != nil {
		t.Fatalf("Step = %q, %v; want RescheduleTriggered, nil", out.Reason, out.Err)
	}
	if got, _ := replicasOn(out.Binding); !cmp.Equal(got, map[string]int32{"m1": 2, "m2": 4}) {
		t.Errorf("during the move: replicas %v; want m1:2 (new) and m2:4 (kept until m1 is Healthy)", got)
	}
	if !Rebalancing(out.Binding) {
		t.Fatalf("no move recorded (%s)", AnnotationRebalance)
	}

	// m1 not Healthy yet: nothing changes, not even a reschedule of the
	// sum above spec.replicas.
	waiting := health(out.Binding, map[string]configv1alpha1.ResourceHealth{"m1": configv1alpha1.ResourceUnknown, "m2": configv1alpha1.ResourceHealthy})
	out2 := Step(waiting, members, now.Add(time.Minute), opts)
	if got, _ := replicasOn(out2.Binding); !cmp.Equal(got, map[string]int32{"m1": 2, "m2": 4}) || out2.Reason != placement.ReasonNone {
		t.Errorf("m1 not Healthy: replicas %v, reason %q; want m1:2 m2:4 kept, no reschedule", got, out2.Reason)
	}
	if want := now.Add(10*time.Minute + time.Millisecond); !out2.Recheck.Equal(want) {
		t.Errorf("Recheck = %v; want the move's timeout %v", out2.Recheck, want)
	}

	// Every target Healthy: m2 gives its replicas back.
	done := health(out2.Binding, map[string]configv1alpha1.ResourceHealth{"m1": configv1alpha1.ResourceHealthy, "m2": configv1alpha1.ResourceHealthy})
	out3 := Step(done, members, now.Add(2*time.Minute), opts)
	if got, _ := replicasOn(out3.Binding); !cmp.Equal(got, map[string]int32{"m1": 2, "m2": 2}) || Rebalancing(out3.Binding) {
		t.Errorf("all Healthy: replicas %v, moving %v; want m1:2 m2:2, the move over", got, Rebalancing(out3.Binding))
	}
	if out4 := Step(out3.Binding, members, now.Add(3*time.Minute), opts); out4.Reason != placement.ReasonNone {
		t.Errorf("after the move: Step = %q; want nothing to schedule", out4.Reason)
	}
}

// New copies that never become Healthy: after the timeout the move is
// called off and the old assignment comes back whole.
func TestRebalanceCalledOffAfterTimeout(t *testing.T) {
	members := []Member{ready("m1"), ready("m2")}
	opts := Options{EvictionTimeout: 10 * time.Minute}
	now := t0.Add(2 * time.Minute)
	out := Step(failedOver(), members, now, opts)
	stuck := health(out.Binding, map[string]configv1alpha1.ResourceHealth{"m1": configv1alpha1.ResourceUnhealthy, "m2": configv1alpha1.ResourceHealthy})
	out2 := Step(stuck, members, now.Add(11*time.Minute), opts)
	if got, _ := replicasOn(out2.Binding); !cmp.Equal(got, map[string]int32{"m2": 4}) || Rebalancing(out2.Binding) || out2.Reason != placement.ReasonNone {
		t.Errorf("after the timeout: replicas %v, moving %v, reason %q; want m2:4 back, no move, no reschedule", got, Rebalancing(out2.Binding), out2.Reason)
	}
}

// A user scaling the workload during a move ends it: the scheduler takes
// the targets as they are.
func TestRebalanceDroppedOnScale(t *testing.T) {
	members := []Member{ready("m1"), ready("m2")}
	out := Step(failedOver(), members, t0.Add(2*time.Minute), Options{})
	scaled := CloneBinding(out.Binding)
	scaled.Spec.Replicas = 8
	out2 := Step(scaled, members, t0.Add(3*time.Minute), Options{})
	if Rebalancing(out2.Binding) || out2.Reason == placement.ReasonNone {
		t.Errorf("scaled during a move: moving %v, reason %q; want the move dropped and a reschedule", Rebalancing(out2.Binding), out2.Reason)
	}
	if _, sum := replicasOn(out2.Binding); sum != 8 {
		t.Errorf("replicas sum = %d; want 8", sum)
	}
}

// A triggered reschedule that only adds replicas (or a Duplicated one)
// starts no move.
func TestRebalanceNotNeeded(t *testing.T) {
	members := []Member{ready("m1"), ready("m2")}
	b := scheduled(binding(dividedStatic("m1", "m2"), 4, tc("m1", 2), tc("m2", 2)))
	b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0.Add(time.Minute)}
	if out := Step(b, members, t0.Add(2*time.Minute), Options{}); Rebalancing(out.Binding) {
		t.Errorf("balanced already: a move was started")
	}
	d := scheduled(binding(duplicated(), 2, tc("m1", 2)))
	d.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0.Add(time.Minute)}
	if out := Step(d, members, t0.Add(2*time.Minute), Options{}); Rebalancing(out.Binding) {
		t.Errorf("Duplicated: a move was started")
	}
}
