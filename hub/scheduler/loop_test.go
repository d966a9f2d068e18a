package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

func dynamic() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}}
}

func replicasOn(b *workv1alpha1.ResourceBinding) (map[string]int32, int32) {
	out, sum := map[string]int32{}, int32(0)
	for _, t := range b.Spec.Clusters {
		out[t.Name] = t.Replicas
		sum += t.Replicas
	}
	return out, sum
}

func TestLoopSchedulesScalesFailsOverAndRestarts(t *testing.T) {
	e := newEnv(t, 40*time.Second)
	for _, n := range []string{"m1", "m2", "m3"} {
		e.putCluster(n)
	}
	e.heartbeat("m1", "m2", "m3")
	e.putBinding(webRef, binding(dynamic(), 6))
	depRef := store.ObjectRef{Kind: "ConfigMap", Namespace: "prod", Name: "cfg"}
	dep := binding(nil, 0)
	dep.Spec.Resource = workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "cfg"}
	e.putBinding(depRef, dep)
	_, depRev := e.getBinding(depRef)
	l, stop := e.start(Config{FailoverUnreachable: true})

	b := e.waitBinding(webRef, "6 replicas on 3 clusters", func(b *workv1alpha1.ResourceBinding) bool {
		on, sum := replicasOn(b)
		return sum == 6 && len(on) == 3
	})
	if on, _ := replicasOn(b); on["m1"] != 2 || on["m2"] != 2 || on["m3"] != 2 {
		t.Errorf("replicas = %v; want 2 each (equal capacity)", on)
	}

	e.updateBinding(webRef, func(b *workv1alpha1.ResourceBinding) { b.Spec.Replicas = 9 })
	b = e.waitBinding(webRef, "9 replicas", func(b *workv1alpha1.ResourceBinding) bool { _, sum := replicasOn(b); return sum == 9 })
	if on, _ := replicasOn(b); on["m1"] < 2 || on["m2"] < 2 || on["m3"] < 2 {
		t.Errorf("after scale-up replicas = %v; want every cluster to keep its 2 (sticky)", on)
	}
	before, _ := replicasOn(b)

	// m3 stops heartbeating: Unknown at 40s, tainted unreachable:NoExecute,
	// which the default toleration tolerates for 300 s.
	e.keepAlive(40*time.Second, "m1", "m2")
	e.waitState("Unknown", "m3")
	e.settle(l)
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("eviction tasks = %+v as m3 turned Unknown; want none before the toleration runs out", b.Spec.GracefulEvictionTasks)
	}
	e.keepAlive(place.DefaultUnreachableToleration, "m1", "m2")
	b = e.waitBinding(webRef, "failover off m3", func(b *workv1alpha1.ResourceBinding) bool {
		on, sum := replicasOn(b)
		_, onM3 := on["m3"]
		return !onM3 && sum == 9
	})
	tasks := b.Spec.GracefulEvictionTasks
	if len(tasks) != 1 || tasks[0].FromCluster != "m3" || tasks[0].Producer != place.EvictionProducer || tasks[0].Replicas == nil || *tasks[0].Replicas != before["m3"] {
		t.Errorf("eviction tasks = %+v; want one for m3 with its %d replicas", tasks, before["m3"])
	}

	// The aggregator reports the replacement healthy: the task goes.
	e.updateBinding(webRef, func(b *workv1alpha1.ResourceBinding) {
		b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{
			{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy},
			{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceHealthy},
			{ClusterName: "m3", Applied: true, Health: configv1alpha1.ResourceUnknown},
		}
	})
	e.waitBinding(webRef, "eviction task removed", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.GracefulEvictionTasks) == 0 })
	if _, rev := e.getBinding(depRef); rev != depRev {
		t.Errorf("dependency binding written (revision %d → %d); want it left alone", depRev, rev)
	}

	// A restarted loop writes nothing.
	stop()
	rev := e.revision()
	l2, _ := e.start(Config{FailoverUnreachable: true})
	e.waitPasses(l2, 1)
	time.Sleep(300 * time.Millisecond)
	if got := e.revision(); got != rev || l2.writes.Load() != 0 {
		t.Errorf("after a restart: store revision %d → %d, %d writes; want no write", rev, got, l2.writes.Load())
	}
	if l.writes.Load() == 0 {
		t.Errorf("first loop wrote nothing")
	}
}

func TestLoopAdminTaintsCordonAndDrain(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.putCluster("m1")
	e.putCluster("m2")
	e.putCluster("m3")
	e.heartbeat("m1", "m2", "m3", "m4") // m4 is not registered yet
	e.putBinding(webRef, binding(duplicated(), 2))
	e.start(Config{GracefulEvictionTimeout: 5 * time.Minute})
	e.waitBinding(webRef, "Duplicated on m1, m2, m3", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 3 })

	// Cordon m4 as it registers: Duplicated follows cluster changes but
	// does not go there, unless the policy tolerates the cordon (probe).
	probeRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "probe"}
	probe := binding(duplicated(), 1)
	probe.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: "cordoned", Operator: corev1.TolerationOpExists}}
	e.putBinding(probeRef, probe)
	e.putCluster("m4", corev1.Taint{Key: "cordoned", Effect: corev1.TaintEffectNoSchedule})
	e.waitBinding(probeRef, "tolerating probe on m4", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 4 })
	if b, _ := e.getBinding(webRef); len(b.Spec.Clusters) != 3 {
		t.Errorf("clusters = %v; want m4 (cordoned) left out", names(b.Spec.Clusters))
	}

	// Drain m2: a NoExecute taint the policy does not tolerate.
	e.putCluster("m2", corev1.Taint{Key: "drain", Effect: corev1.TaintEffectNoExecute})
	b := e.waitBinding(webRef, "m2 evicted", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 2 })
	if got := names(b.Spec.Clusters); got[0] != "m1" || got[1] != "m3" || len(b.Spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("clusters %v, tasks %+v; want m1 m3 and a task for m2", got, b.Spec.GracefulEvictionTasks)
	}
	rej, _ := placement.Rejections(b)
	if len(rej) != 2 || rej[0].Cluster != "m2" || rej[1].Cluster != "m4" {
		t.Errorf("rejections = %+v; want m2 (evicting, drain taint) and m4 (cordoned)", rej)
	}
	// Nobody reports health: the task times out on the loop's clock.
	e.clock.Advance(5*time.Minute + time.Second)
	e.waitBinding(webRef, "task timed out", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.GracefulEvictionTasks) == 0 })
}
