package scheduler

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// BenchmarkCapacityHeartbeat is the loop's cost of one heartbeat that
// changes a cluster's capacity (as while pods start) with the baseline's
// 100 Duplicated bindings on 3 clusters: examined/op is how many bindings
// Step ran on, cpu-µs/op the process's CPU per heartbeat (the loop, the
// leases, the embedded etcd; ns/op is mostly the poll for the pass).
func BenchmarkCapacityHeartbeat(b *testing.B) {
	e := newEnv(b, time.Hour)
	all := []string{"m1", "m2", "m3"}
	for _, n := range all {
		e.putCluster(n)
	}
	e.capacityBeat("550", "0", all...)
	const bindings = 100
	for i := range bindings {
		e.putBinding(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: fmt.Sprintf("bench-%03d", i)}, binding(duplicated(), 3))
	}
	l := New(e.st, e.view, e.leases, Config{Clock: e.clock}, hclog.NewNullLogger())
	e.goRun("scheduler", l.Run)
	last := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: fmt.Sprintf("bench-%03d", bindings-1)}
	e.waitBinding(last, "scheduled", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 3 })
	e.settle(l)

	examined, cpu := l.examined.Load(), cpuTime()
	b.ResetTimer()
	for i := range b.N {
		e.capacityBeat("550", fmt.Sprint(i%500+1), all[i%len(all)])
		e.settle(l)
	}
	b.StopTimer()
	b.ReportMetric(float64(l.examined.Load()-examined)/float64(b.N), "examined/op")
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStatusWrite1000Clusters is the replica's cost, for the loop,
// of one of the aggregator's status writes of a binding Duplicated to
// 1,000 clusters (an item per cluster): the view's one decode and the
// loop's apply of a write Step reads nothing of.
func BenchmarkStatusWrite1000Clusters(b *testing.B) {
	var targets []workv1alpha1.TargetCluster
	for i := range 1000 {
		targets = append(targets, workv1alpha1.TargetCluster{Name: fmt.Sprintf("member-%04d", i), Replicas: 3})
	}
	events := make([][]byte, 2)
	for i := range events {
		bnd := binding(duplicated(), 3, targets...)
		for _, t := range targets {
			bnd.Status.AggregatedStatus = append(bnd.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
				ClusterName: t.Name, Applied: true, Health: configv1alpha1.ResourceHealthy,
				Status: &runtime.RawExtension{Raw: fmt.Appendf(nil, `{"replicas":3,"readyReplicas":%d}`, i+2)}})
		}
		data, err := json.Marshal(bnd)
		if err != nil {
			b.Fatal(err)
		}
		events[i] = data
	}
	l := New(nil, nil, nil, Config{StartupGrace: time.Minute}, hclog.NewNullLogger())
	l.bindings, l.works, l.dirty = map[string]*entry{}, map[string]int{}, map[string]bool{}
	b.SetBytes(int64(len(events[0])))
	b.ReportAllocs()
	rev := int64(0)
	for b.Loop() {
		rev++
		l.applyBinding(decoded("/tether/bindings/apps/Deployment/prod/web", events[rev%2], rev))
	}
	if len(l.dirty) != 1 {
		b.Fatalf("%d bindings to reconcile; want only the first write's", len(l.dirty))
	}
}

// BenchmarkClusterJoin is the loop's time to place 200 Duplicated
// bindings on one more cluster when it joins: one processing pass that
// writes every binding. The writes of a pass go to the store together
// (writeAll); one after the other, each cost a store round.
func BenchmarkClusterJoin(b *testing.B) {
	e := newEnv(b, time.Hour)
	e.putCluster("m0")
	e.heartbeat("m0")
	const bindings = 200
	for i := range bindings {
		e.putBinding(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: fmt.Sprintf("bench-%03d", i)}, binding(duplicated(), 3))
	}
	l := New(e.st, e.view, e.leases, Config{Clock: e.clock}, hclog.NewNullLogger())
	e.goRun("scheduler", l.Run)
	waitWrites := func(n uint64) {
		deadline := time.Now().Add(waitTimeout)
		for l.writes.Load() < n {
			if time.Now().After(deadline) {
				b.Fatalf("%d bindings written; want %d", l.writes.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitWrites(bindings)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("m%d", i+1)
		e.putCluster(name)
		e.heartbeat(name)
		waitWrites(uint64(bindings * (i + 2)))
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/join")
}
