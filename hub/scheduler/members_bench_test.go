package scheduler

import (
	"fmt"
	"testing"
	"time"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
)

// BenchmarkRefresh10k is the snapshot work of one lease change with
// 10,000 Ready clusters: BuildMembers and the comparison with the previous
// snapshot (membersDiff), one heartbeat's capacity changed.
func BenchmarkRefresh10k(b *testing.B) {
	const n = 10000
	stored := make([]clusterv1alpha1.Cluster, n)
	leases := make([]lease.Lease, n)
	for i := range n {
		stored[i].Name = fmt.Sprintf("c%05d", i)
		stored[i].Labels = map[string]string{"env": "prod"}
		leases[i] = lease.Lease{Cluster: stored[i].Name, State: lease.StateReady, Heartbeat: &agentv1.Heartbeat{
			ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "110", "cpu": "32"}, Allocated: map[string]string{"pods": "3"}},
			ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}}
	}
	now := time.Now()
	prev := place.BuildMembers(stored, leases, now, place.Liveness{})
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		leases[i%n].Heartbeat.ResourceSummary.Allocated["pods"] = fmt.Sprint(i % 100)
		cur := place.BuildMembers(stored, leases, now, place.Liveness{})
		if shape, _ := membersDiff(prev, cur, nil); len(shape) > 0 {
			b.Fatal("a capacity change reported as a shape change")
		}
		prev = cur
		i++
	}
}

// BenchmarkRefreshCached10k is BenchmarkRefresh10k as the loop does it,
// through its memberCache: one heartbeat changed, one member rebuilt.
func BenchmarkRefreshCached10k(b *testing.B) {
	const n = 10000
	stored := make([]clusterv1alpha1.Cluster, n)
	leases := make([]lease.Lease, n)
	gens := make(map[string]uint64, n)
	for i := range n {
		stored[i].Name = fmt.Sprintf("c%05d", i)
		stored[i].Labels = map[string]string{"env": "prod"}
		gens[stored[i].Name] = uint64(i)
		leases[i] = lease.Lease{Cluster: stored[i].Name, State: lease.StateReady, Heartbeat: &agentv1.Heartbeat{
			ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "110", "cpu": "32"}, Allocated: map[string]string{"pods": "3"}},
			ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}}
	}
	now := time.Now()
	var c memberCache
	prev, _ := c.build(stored, gens, leases, now, place.Liveness{})
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		hb := leases[i%n].Heartbeat
		leases[i%n].Heartbeat = &agentv1.Heartbeat{ApiEnablements: hb.ApiEnablements, ResourceSummary: &agentv1.ResourceSummary{
			Allocatable: hb.ResourceSummary.Allocatable, Allocated: map[string]string{"pods": fmt.Sprint(i % 100)}}}
		cur, rebuilt := c.build(stored, gens, leases, now, place.Liveness{})
		if shape, _ := membersDiff(prev, cur, rebuilt); len(shape) > 0 {
			b.Fatal("a capacity change reported as a shape change")
		}
		prev = cur
		i++
	}
}
