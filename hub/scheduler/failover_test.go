package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

var dupRef = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "dup"}

// threeClusters registers m1, m2, m3 with a Divided binding (webRef, 6
// replicas) and a Duplicated one (dupRef), and waits for both on all three.
func threeClusters(t *testing.T, cfg Config, modify func(*workv1alpha1.ResourceBinding)) (*env, *Loop) {
	e, l, _ := threeClustersStop(t, cfg, modify)
	return e, l
}

// threeClustersStop is threeClusters, with the loop's stop function.
func threeClustersStop(t *testing.T, cfg Config, modify func(*workv1alpha1.ResourceBinding)) (*env, *Loop, func()) {
	e := newEnv(t, 40*time.Second)
	for _, n := range []string{"m1", "m2", "m3"} {
		e.putCluster(n)
	}
	e.heartbeat("m1", "m2", "m3")
	web := binding(dynamic(), 6)
	if modify != nil {
		modify(web)
	}
	e.putBinding(webRef, web)
	e.putBinding(dupRef, binding(duplicated(), 1))
	l, stop := e.start(cfg)
	for _, ref := range []store.ObjectRef{webRef, dupRef} {
		e.waitBinding(ref, "on 3 clusters", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 3 })
	}
	// The loop counts a write once the store has taken it: the bindings
	// can be read before both are counted.
	for deadline := time.Now().Add(waitTimeout); l.writes.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("loop counted %d binding writes; want 2", l.writes.Load())
		}
	}
	return e, l, stop
}

func failoverCluster(b *workv1alpha1.ResourceBinding) {
	b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{}}
}

// TestLoopUnreachableClusterKeepsItsBindings: by default (no failover in
// the policy, no hub flag) a cluster away for 10 minutes stays in every
// binding, and nothing is written.
func TestLoopUnreachableClusterKeepsItsBindings(t *testing.T) {
	e, l := threeClusters(t, Config{}, nil)
	writes := l.writes.Load()
	e.keepAlive(40*time.Second, "m1", "m2")
	e.waitState("Unknown", "m3")
	e.keepAlive(10*time.Minute, "m1", "m2")
	e.settle(l)
	for _, ref := range []store.ObjectRef{webRef, dupRef} {
		if b, _ := e.getBinding(ref); len(b.Spec.Clusters) != 3 || len(b.Spec.GracefulEvictionTasks) != 0 {
			t.Errorf("%s after m3 was away 10 min: clusters %v, tasks %+v; want m3 kept, no eviction", ref.Name, names(b.Spec.Clusters), b.Spec.GracefulEvictionTasks)
		}
	}
	if got := l.writes.Load(); got != writes {
		t.Errorf("loop wrote %d bindings while m3 was away; want none", got-writes)
	}
}

// TestLoopFullDisruptionEvictsNothing: two of three clusters away at once
// (≥ 55 %) is a hub-side problem: even with failover on, nothing moves, and
// once most are back the one still away counts its toleration from then.
func TestLoopFullDisruptionEvictsNothing(t *testing.T) {
	e, l := threeClusters(t, Config{FailoverUnreachable: true}, nil)
	e.keepAlive(40*time.Second, "m1")
	e.waitState("Unknown", "m2", "m3")
	e.keepAlive(10*time.Minute, "m1")
	e.settle(l)
	if !l.Disrupted() {
		t.Errorf("Disrupted = false with m2, m3 away; want full disruption")
	}
	if b, _ := e.getBinding(webRef); len(b.Spec.Clusters) != 3 || len(b.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("after 10 min of full disruption: clusters %v, tasks %+v; want nothing evicted", names(b.Spec.Clusters), b.Spec.GracefulEvictionTasks)
	}

	e.heartbeat("m2") // back: 1 of 3 away, the disruption is over
	e.settle(l)
	if l.Disrupted() {
		t.Errorf("Disrupted = true with only m3 away; want it over")
	}
	e.keepAlive(place.DefaultUnreachableToleration-10*time.Second, "m1", "m2")
	e.settle(l)
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("m3 evicted %s after the disruption ended; want its toleration counted from then", place.DefaultUnreachableToleration-10*time.Second)
	}
	e.keepAlive(20*time.Second, "m1", "m2")
	b := e.waitBinding(webRef, "m3 evicted", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.GracefulEvictionTasks) == 1 })
	if slices.Contains(names(b.Spec.Clusters), "m3") {
		t.Errorf("clusters %v; want m3 failed over", names(b.Spec.Clusters))
	}
	if d, _ := e.getBinding(dupRef); len(d.Spec.Clusters) != 3 || len(d.Spec.GracefulEvictionTasks) != 0 {
		t.Errorf("Duplicated binding: clusters %v, tasks %+v; want m3 kept (never failed over)", names(d.Spec.Clusters), d.Spec.GracefulEvictionTasks)
	}
}

// TestLoopDisruptionEndSurvivesLeaderChange: a full disruption ends on
// one leader while m3 is still away; the next leader (a new loop on the
// same store, with the same leases) counts m3's toleration from the end of
// the disruption, as the first did, not from when m3 went away: nothing is
// evicted before the toleration has run from then.
func TestLoopDisruptionEndSurvivesLeaderChange(t *testing.T) {
	e, l, stop := threeClustersStop(t, Config{FailoverUnreachable: true}, nil)
	e.keepAlive(40*time.Second, "m1")
	e.waitState("Unknown", "m2", "m3")
	e.keepAlive(10*time.Minute, "m1")
	e.settle(l)
	e.heartbeat("m2") // the disruption is over; m3 is still away
	e.settle(l)
	if l.Disrupted() {
		t.Fatalf("Disrupted = true with only m3 away; want it over")
	}
	ended := e.clock.Now()
	deadline := time.Now().Add(waitTimeout)
	for {
		if _, err := e.st.Get(e.ctx, store.NoExecuteFloorKey); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the end of the disruption was never stored (%s)", store.NoExecuteFloorKey)
		}
		time.Sleep(time.Millisecond)
	}
	stop() // the leader changes
	next, _ := e.start(Config{FailoverUnreachable: true})
	e.keepAlive(place.DefaultUnreachableToleration-10*time.Second, "m1", "m2")
	e.settle(next)
	if kv, err := e.st.Get(e.ctx, store.NoExecuteFloorKey); err != nil || string(kv.Value) != ended.UTC().Format(time.RFC3339Nano) {
		t.Errorf("stored floor %q (%v); want the disruption's end %v", kv.Value, err, ended)
	}
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 0 || !slices.Contains(names(b.Spec.Clusters), "m3") {
		t.Fatalf("new leader, %s after the disruption ended: clusters %v, tasks %+v; want m3 kept until its toleration has run from then",
			place.DefaultUnreachableToleration-10*time.Second, names(b.Spec.Clusters), b.Spec.GracefulEvictionTasks)
	}
	e.keepAlive(20*time.Second, "m1", "m2")
	e.waitBinding(webRef, "m3 evicted", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.GracefulEvictionTasks) == 1 })
}

// TestLoopReturningClusterIsBackAtOnce: a cluster that failed over
// (failover.cluster) and returns before its replacement is healthy keeps
// its copy: its eviction ends, it is a target again, and no rejection says
// it is being evicted.
func TestLoopReturningClusterIsBackAtOnce(t *testing.T) {
	e, l := threeClusters(t, Config{}, failoverCluster)
	e.keepAlive(40*time.Second, "m1", "m2")
	e.waitState("Unknown", "m3")
	e.keepAlive(place.DefaultUnreachableToleration, "m1", "m2")
	b := e.waitBinding(webRef, "m3 evicted", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.GracefulEvictionTasks) == 1 })
	rej, _ := placement.Rejections(b)
	if len(rej) != 1 || rej[0].Cluster != "m3" || !strings.Contains(strings.Join(rej[0].Reasons, ","), "in the process of eviction") {
		t.Errorf("rejections while evicting = %+v; want m3 in the process of eviction", rej)
	}
	// Nobody reports the replacement healthy; the task outlives its
	// timeout, because m3 is away and keeps its copy.
	e.keepAlive(place.DefaultGracefulEvictionTimeout+time.Minute, "m1", "m2")
	e.settle(l)
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("tasks = %+v after the timeout with m3 away; want the task kept", b.Spec.GracefulEvictionTasks)
	}

	e.heartbeat("m3") // the link heals: no clock moves
	b = e.waitBinding(webRef, "m3 back", func(b *workv1alpha1.ResourceBinding) bool {
		return len(b.Spec.GracefulEvictionTasks) == 0 && slices.Contains(names(b.Spec.Clusters), "m3")
	})
	on, sum := replicasOn(b)
	if on["m3"] == 0 || sum != 6 {
		t.Errorf("replicas = %v; want m3 back with replicas, 6 in all", on)
	}
	if rej, _ := placement.Rejections(b); len(rej) != 0 {
		t.Errorf("rejections after m3 is back = %+v; want none", rej)
	}
}

// TestLoopWorksLimit: the scheduler places no new workload on a cluster at
// the limit of works, says so on the binding, and places it once room is
// made.
func TestLoopWorksLimit(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.putCluster("m1")
	e.putCluster("m2")
	e.heartbeat("m1", "m2")
	e.putBinding(webRef, binding(duplicated(), 1))
	e.start(Config{MaxWorks: 1})
	e.waitBinding(webRef, "web on m1, m2", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 2 })

	e.putBinding(dupRef, binding(duplicated(), 1))
	b := e.waitBinding(dupRef, "a decision", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Status.Conditions) > 0 })
	if len(b.Spec.Clusters) != 0 {
		t.Errorf("dup placed on %v; want nowhere (both clusters at the limit)", names(b.Spec.Clusters))
	}
	rej, _ := placement.Rejections(b)
	if len(rej) != 2 || !strings.Contains(rej[0].Reasons[0], "limit of works per cluster") {
		t.Errorf("rejections = %+v; want m1 and m2 at the works limit", rej)
	}
	if c := b.Status.Conditions[0]; c.Reason != placement.ReasonNoClusterFit || !strings.Contains(c.Message, "limit of works") {
		t.Errorf("Scheduled condition = %+v; want NoClusterFit naming the limit", c)
	}

	// web leaves m2: dup goes there.
	e.updateBinding(webRef, func(b *workv1alpha1.ResourceBinding) {
		b.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}
	})
	e.waitBinding(dupRef, "dup on m2", func(b *workv1alpha1.ResourceBinding) bool {
		return len(b.Spec.Clusters) == 1 && b.Spec.Clusters[0].Name == "m2"
	})
}
