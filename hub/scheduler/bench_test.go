package scheduler

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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
	l := New(e.st, e.leases, Config{Clock: e.clock}, hclog.NewNullLogger())
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
