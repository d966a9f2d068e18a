package scheduler

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
)

// The cache builds what BuildMembers builds, rebuilding only the members
// whose stored cluster or lease changed, and all of them when the
// liveness rules change (the start-up grace ends, full disruption).
func TestMemberCacheBuildsWhatBuildMembersBuilds(t *testing.T) {
	beat := func(pods string) *agentv1.Heartbeat {
		return &agentv1.Heartbeat{ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": pods}}}
	}
	stored := []clusterv1alpha1.Cluster{storedCluster("m1"), storedCluster("m2"), storedCluster("m3")}
	gens := map[string]uint64{"m1": 1, "m2": 2, "m3": 3}
	leases := []lease.Lease{leaseOf("m1", lease.StateReady, t0, beat("10")), leaseOf("m2", lease.StateReady, t0, beat("20"))}
	lv := place.Liveness{GraceUntil: t0.Add(time.Minute)}
	now := t0
	var c memberCache
	step := func(what string, want ...string) {
		t.Helper()
		got, rebuilt := c.build(stored, gens, leases, now, lv)
		if exp := place.BuildMembers(stored, leases, now, lv); !equality.Semantic.DeepEqual(got, exp) {
			t.Errorf("%s: cache built %+v; BuildMembers %+v", what, got, exp)
		}
		if want == nil {
			if rebuilt != nil {
				t.Errorf("%s: rebuilt %v; want all", what, rebuilt)
			}
			return
		}
		if len(rebuilt) != len(want) {
			t.Errorf("%s: rebuilt %v; want %v", what, rebuilt, want)
		}
		for _, n := range want {
			if !rebuilt[n] {
				t.Errorf("%s: rebuilt %v; want %v", what, rebuilt, want)
			}
		}
	}
	step("first build")
	step("nothing changed", []string{}...)
	leases[1].Heartbeat = beat("25")
	step("m2's heartbeat", "m2")
	stored[0] = storedCluster("m1", corev1.Taint{Key: "cordoned", Effect: corev1.TaintEffectNoSchedule})
	gens["m1"] = 4
	step("m1's taint", "m1")
	leases = append(leases, leaseOf("m3", lease.StateReady, t0, beat("30")))
	step("m3's lease", "m3")
	leases[2].State, leases[2].Since = lease.StateUnknown, t0.Add(30*time.Second)
	step("m3 unknown", "m3")
	now = t0.Add(2 * time.Minute)
	step("grace over")
	lv.Disrupted = true
	step("full disruption")
	stored = stored[:2]
	step("m3 gone", []string{}...)
}
