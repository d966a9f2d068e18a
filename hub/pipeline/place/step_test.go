package place

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/placement"
)

func TestBuildInput(t *testing.T) {
	b := binding(&policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}}, 3, tc("m1", 3))
	b.Status.SchedulerObservedAffinityName = "a"
	b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m2"}}
	b.Spec.RescheduleTriggeredAt = &metav1.Time{Time: t0}
	noAPI := ready("m3")
	noAPI.APIs = nil
	in := BuildInput(b, []Member{ready("m1"), ready("m2"), noAPI}, Options{EmptyWorkloads: true, Full: map[string]bool{"m2": true}})
	if got := in.Placement.ReplicaScheduling.ReplicaSchedulingType; got != policyv1alpha1.ReplicaSchedulingTypeDivided {
		t.Errorf("placement type = %q; want Divided (defaults applied)", got)
	}
	if b.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType != "" {
		t.Errorf("BuildInput defaulted the binding's own placement; want a copy")
	}
	if !in.Clusters[0].APIEnabled || in.Clusters[2].APIEnabled {
		t.Errorf("APIEnabled = %v, %v; want true for a cluster serving apps/v1 Deployment, false otherwise", in.Clusters[0].APIEnabled, in.Clusters[2].APIEnabled)
	}
	if in.Clusters[0].WorksFull || !in.Clusters[1].WorksFull {
		t.Errorf("WorksFull = %v, %v; want m2 only (Options.Full)", in.Clusters[0].WorksFull, in.Clusters[1].WorksFull)
	}
	w := in.Workload
	if w.Kind != "Deployment" || w.UID != "uid-1" || w.Replicas != 3 || w.Namespace != "prod" {
		t.Errorf("workload = %+v; want the template's identity, UID and replicas", w)
	}
	p := in.Previous
	if p.ObservedAffinityName != "a" || !cmp.Equal(p.EvictingClusters, []string{"m2"}) || !p.RescheduleTriggered || len(p.Clusters) != 1 || !in.EnableEmptyWorkloadPropagation {
		t.Errorf("previous = %+v; want the binding's term, evicting m2, triggered, one target", p)
	}
}

func TestStepSchedulesOnceThenHoldsStill(t *testing.T) {
	members := []Member{ready("m1"), ready("m2"), ready("m3")}
	b := binding(duplicated(), 2)
	out := Step(b, members, t0, Options{EvictionTimeout: time.Minute})
	if out.Reason != placement.ReasonNew || out.Err != nil {
		t.Fatalf("Step = %q, %v; want New, nil", out.Reason, out.Err)
	}
	nb := out.Binding
	if got := names(nb.Spec.Clusters); !cmp.Equal(got, []string{"m1", "m2", "m3"}) {
		t.Errorf("clusters = %v; want m1 m2 m3", got)
	}
	if !meta.IsStatusConditionTrue(nb.Status.Conditions, placement.ConditionScheduled) || nb.Annotations[placement.AnnotationAppliedPlacement] == "" || nb.Status.LastScheduledTime == nil {
		t.Errorf("binding = %+v; want Scheduled True, applied placement and lastScheduledTime", nb)
	}
	again := Step(nb, members, t0.Add(time.Hour), Options{})
	if JSONString(again.Binding) != JSONString(nb) {
		t.Errorf("a second Step changed the binding:\n%s", cmp.Diff(JSONString(nb), JSONString(again.Binding)))
	}
}

func TestStepFitErrorClearsAndRecordsRejections(t *testing.T) {
	cordon := corev1.Taint{Key: "cordoned", Effect: corev1.TaintEffectNoSchedule}
	members := []Member{ready("m1", cordon), ready("m2", cordon)}
	b := scheduled(binding(dividedStatic("m1", "m2"), 2))
	b.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}
	b.Spec.Clusters = []workv1alpha1.TargetCluster{tc("m1", 1)} // replicas short: reschedule
	out := Step(b, []Member{members[0], members[1]}, t0, Options{})
	b2 := out.Binding
	// m1 is a previous target: it bypasses the taint filter.
	if out.Err != nil || !cmp.Equal(names(b2.Spec.Clusters), []string{"m1"}) {
		t.Fatalf("Step = %v, clusters %v; want m1 kept (scheduled clusters bypass taints)", out.Err, names(b2.Spec.Clusters))
	}
	rej, err := placement.Rejections(b2)
	if err != nil || len(rej) != 1 || rej[0].Cluster != "m2" || !strings.Contains(rej[0].Reasons[0], "untolerated taint {cordoned:NoSchedule}") {
		t.Errorf("Rejections = %+v, %v; want m2 with the untolerated cordon taint", rej, err)
	}
	b.Spec.Clusters = nil
	out = Step(b, members, t0, Options{})
	c := meta.FindStatusCondition(out.Binding.Status.Conditions, placement.ConditionScheduled)
	if out.Err == nil || c == nil || c.Status != metav1.ConditionFalse || c.Reason != placement.ReasonNoClusterFit || !strings.Contains(c.Message, "0/2 clusters are available") {
		t.Errorf("Step on cordoned clusters = %v, condition %+v; want a FitError recorded as NoClusterFit", out.Err, c)
	}
	if len(out.Binding.Spec.Clusters) != 0 {
		t.Errorf("clusters after a FitError = %v; want none", out.Binding.Spec.Clusters)
	}
}

// TestStepFailsOverUntoleratedNoExecute: a binding whose policy asks for
// failover leaves a cluster unreachable for longer than the default
// toleration.
func TestStepFailsOverUntoleratedNoExecute(t *testing.T) {
	added := t0.Add(-DefaultUnreachableToleration)
	members := []Member{ready("m1"), ready("m2"), ready("m3", noExecute(clusterUnreachable, added))}
	b := scheduled(binding(dividedStatic("m1", "m2", "m3"), 3, tc("m1", 1), tc("m2", 1), tc("m3", 1)))
	b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{}}
	out := Step(b, members, t0, Options{EvictionTimeout: 10 * time.Minute})
	nb := out.Binding
	if len(out.Evicted) != 1 || out.Evicted[0].Cluster != "m3" || out.Reason != placement.ReasonReplicasChanged {
		t.Fatalf("Step = evicted %+v, reason %q; want m3 evicted and a reschedule for the missing replica", out.Evicted, out.Reason)
	}
	var sum int32
	for _, tgt := range nb.Spec.Clusters {
		sum += tgt.Replicas
		if tgt.Name == "m3" {
			t.Errorf("m3 still a target: %v", nb.Spec.Clusters)
		}
	}
	if sum != 3 || len(nb.Spec.GracefulEvictionTasks) != 1 || nb.Spec.GracefulEvictionTasks[0].FromCluster != "m3" {
		t.Errorf("after failover: clusters %v, tasks %+v; want 3 replicas on m1, m2 and a task for m3", nb.Spec.Clusters, nb.Spec.GracefulEvictionTasks)
	}
	if !out.Recheck.Equal(t0.Add(10*time.Minute + time.Millisecond)) {
		t.Errorf("recheck = %v; want the task's timeout", out.Recheck)
	}
}

// TestStepKeepsEvictionUntilReplacementsReport: the step that fails over
// (here: the admin drains m3) must not end the graceful eviction on the
// strength of status items that describe the targets' previous
// assignments; a failover that changes no remaining target's assignment
// (Duplicated) ends it at once when they are healthy, as in Karmada.
func TestStepKeepsEvictionUntilReplacementsReport(t *testing.T) {
	added := t0.Add(-time.Second)
	members := []Member{ready("m1"), ready("m2"), ready("m3", noExecute("drain", added))}
	allHealthy := func(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
		for _, c := range []string{"m1", "m2", "m3"} {
			b.Status.AggregatedStatus = append(b.Status.AggregatedStatus,
				configv1alpha1.AggregatedStatusItem{ClusterName: c, Applied: true, Health: configv1alpha1.ResourceHealthy})
		}
		return b
	}
	tests := []struct {
		name      string
		b         *workv1alpha1.ResourceBinding
		wantTasks int
	}{
		{"divided: m1 and m2 get more replicas, their items are old",
			allHealthy(scheduled(binding(dividedStatic("m1", "m2", "m3"), 3, tc("m1", 1), tc("m2", 1), tc("m3", 1)))), 1},
		{"duplicated: m1 and m2 unchanged and healthy",
			allHealthy(scheduled(binding(duplicated(), 2, tc("m1", 2), tc("m2", 2), tc("m3", 2)))), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Step(tt.b, members, t0, Options{EvictionTimeout: 10 * time.Minute})
			if len(out.Evicted) != 1 {
				t.Fatalf("Step evicted %+v; want m3", out.Evicted)
			}
			if got := out.Binding.Spec.GracefulEvictionTasks; len(got) != tt.wantTasks {
				t.Errorf("Step tasks = %+v; want %d", got, tt.wantTasks)
			}
		})
	}
}

func TestStepLeavesUnmanagedAlone(t *testing.T) {
	b := binding(nil, 1)
	if out := Step(b, []Member{ready("m1")}, t0, Options{}); out.Binding != b || out.Reason != placement.ReasonNone {
		t.Errorf("Step(dependency binding) = %+v; want it untouched", out)
	}
}

const clusterUnreachable = "cluster.karmada.io/unreachable"

// TestStepUnreachableKeepsWithoutFailover: by default a binding keeps an
// unreachable cluster, whatever its type, and writes nothing.
func TestStepUnreachableKeepsWithoutFailover(t *testing.T) {
	members := []Member{ready("m1"), ready("m2"), {
		Cluster: placement.Cluster{Name: "m3", Taints: []corev1.Taint{
			{Key: clusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: t0.Add(-time.Hour)}},
			noExecute(clusterUnreachable, t0.Add(-time.Hour)),
		}},
		APIs:  map[string]bool{APIKey("apps/v1", "Deployment"): true},
		State: lease.StateUnknown,
	}}
	for name, b := range map[string]*workv1alpha1.ResourceBinding{
		"Divided":    scheduled(binding(dividedStatic("m1", "m2", "m3"), 3, tc("m1", 1), tc("m2", 1), tc("m3", 1))),
		"Duplicated": scheduled(binding(duplicated(), 2, tc("m1", 2), tc("m2", 2), tc("m3", 2))),
	} {
		t.Run(name, func(t *testing.T) {
			out := Step(b, members, t0, Options{})
			if len(out.Evicted) != 0 || JSONString(out.Binding) != JSONString(b) {
				t.Errorf("Step evicted %+v, clusters %v; want m3 kept and nothing written", out.Evicted, names(out.Binding.Spec.Clusters))
			}
		})
	}
}

// TestStepReturnedClusterKeepsItsCopy: a cluster that is back while its
// graceful eviction is pending becomes a target again and its task ends,
// so the copy it kept is never deleted; a task whose cluster is not Ready
// outlives its timeout, a drained one does not.
func TestStepReturnedClusterKeepsItsCopy(t *testing.T) {
	task := workv1alpha1.GracefulEvictionTask{FromCluster: "m3", Replicas: ptr(int32(2)), Producer: EvictionProducer,
		Reason: EvictionReason, CreationTimestamp: &metav1.Time{Time: t0.Add(-time.Hour)}}
	evicted := func() *workv1alpha1.ResourceBinding {
		b := scheduled(binding(dividedStatic("m1", "m2", "m3"), 6, tc("m1", 3), tc("m2", 3)))
		b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{}}
		b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{task}
		return b
	}
	away := ready("m3", noExecute(clusterUnreachable, t0.Add(-time.Hour)))
	away.State = lease.StateUnknown
	notReady := ready("m3")
	notReady.State = lease.StateNotReady
	tests := []struct {
		name         string
		m3           Member
		wantReturned bool
		wantTasks    int
	}{
		{"back and Ready: target again, task gone", ready("m3"), true, 0},
		{"still unreachable: task kept past its timeout", away, false, 1},
		{"NotReady: task kept past its timeout", notReady, false, 1},
		{"Ready but drained: not back, the task times out", ready("m3", noExecute("drain", t0)), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Step(evicted(), []Member{ready("m1"), ready("m2"), tt.m3}, t0, Options{EvictionTimeout: time.Minute})
			nb := out.Binding
			on, sum := replicasOn(nb)
			_, onM3 := on["m3"]
			if len(nb.Spec.GracefulEvictionTasks) != tt.wantTasks {
				t.Errorf("Step tasks = %+v; want %d", nb.Spec.GracefulEvictionTasks, tt.wantTasks)
			}
			if !tt.wantReturned {
				if onM3 || len(out.Returned) != 0 {
					t.Errorf("Step: clusters %v, returned %v; want m3 not a target", nb.Spec.Clusters, out.Returned)
				}
				return
			}
			if !onM3 || on["m3"] == 0 || sum != 6 || !cmp.Equal(out.Returned, []string{"m3"}) {
				t.Errorf("Step: clusters %v (sum %d), returned %v; want m3 back with replicas, 6 in all", nb.Spec.Clusters, sum, out.Returned)
			}
			if out.Err != nil || !meta.IsStatusConditionTrue(nb.Status.Conditions, placement.ConditionScheduled) {
				t.Errorf("Step err = %v; want a successful reschedule", out.Err)
			}
			if rej, _ := placement.Rejections(nb); len(rej) != 0 {
				t.Errorf("rejections = %+v; want none (m3 no longer in the process of eviction)", rej)
			}
		})
	}
}

// TestStepEndedEvictionLeavesNoStaleRejection: a Divided binding is not
// rescheduled when its eviction task ends, so the "in the process of
// eviction" reason recorded with the failover must go with the task.
func TestStepEndedEvictionLeavesNoStaleRejection(t *testing.T) {
	b := scheduled(binding(dividedStatic("m1", "m2", "m3"), 2, tc("m1", 1), tc("m2", 1)))
	b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{
		{FromCluster: "m3", Producer: EvictionProducer, CreationTimestamp: &metav1.Time{Time: t0}},
		{FromCluster: "m4", Producer: EvictionProducer, CreationTimestamp: &metav1.Time{Time: t0}},
	}
	for _, c := range []string{"m1", "m2"} {
		b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{ClusterName: c, Applied: true, Health: configv1alpha1.ResourceHealthy})
	}
	b.Annotations[placement.AnnotationRejections] = JSONString([]placement.Rejection{
		{Cluster: "m3", Reasons: []string{"cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoSchedule}", placement.ReasonEviction}},
		{Cluster: "m4", Reasons: []string{placement.ReasonEviction}},
	})
	away := ready("m3", noExecute(clusterUnreachable, t0))
	away.State = lease.StateUnknown
	out := Step(b, []Member{ready("m1"), ready("m2"), away, ready("m4", noExecute("drain", t0))}, t0, Options{EvictionTimeout: time.Hour})
	if len(out.Binding.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("tasks = %+v; want both ended (replacement healthy)", out.Binding.Spec.GracefulEvictionTasks)
	}
	rej, err := placement.Rejections(out.Binding)
	want := []placement.Rejection{{Cluster: "m3", Reasons: []string{"cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoSchedule}"}}}
	if err != nil || !cmp.Equal(rej, want) {
		t.Errorf("rejections = %+v, %v; want only m3's taint", rej, err)
	}
}

// TestStepReturnedButDroppedKeepsItsTask: a returned cluster that the
// reschedule leaves out (here the placement no longer selects it) keeps
// its copy under a fresh graceful eviction task instead of losing it at
// once.
func TestStepReturnedButDroppedKeepsItsTask(t *testing.T) {
	p := dividedStatic("m1", "m2", "m3")
	p.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}
	b := scheduled(binding(p, 6, tc("m1", 3), tc("m2", 3)))
	b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m3", Replicas: ptr(int32(2)),
		Producer: EvictionProducer, Reason: EvictionReason, CreationTimestamp: &metav1.Time{Time: t0.Add(-time.Hour)}}}
	out := Step(b, []Member{ready("m1"), ready("m2"), ready("m3")}, t0, Options{EvictionTimeout: 10 * time.Minute})
	nb := out.Binding
	if got := names(nb.Spec.Clusters); !cmp.Equal(got, []string{"m1", "m2"}) || len(out.Returned) != 0 {
		t.Errorf("Step: clusters %v, returned %v; want m1 m2, m3 not back", got, out.Returned)
	}
	tasks := nb.Spec.GracefulEvictionTasks
	if len(tasks) != 1 || tasks[0].FromCluster != "m3" || !tasks[0].CreationTimestamp.Time.Equal(t0) {
		t.Errorf("tasks = %+v; want m3's task restarted now", tasks)
	}
	if !out.Recheck.Equal(t0.Add(10*time.Minute + time.Millisecond)) {
		t.Errorf("recheck = %v; want the restarted task's timeout", out.Recheck)
	}
}
