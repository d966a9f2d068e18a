package placement

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The may-differ cases: each asserts Tether's documented behaviour (see
// README, "Where Tether differs from Karmada").

// s29: an unset cluster maxGroups means no upper bound; Karmada selects
// no cluster and fails.
func TestDifferS29ClusterSpreadWithoutMaxGroups(t *testing.T) {
	c := loadCase(t, "s29-spread-cluster-without-maxgroups")
	res, err := Schedule(c.input(t))
	if err != nil {
		t.Fatalf("Schedule(%s) error = %v; want success", c.Name, err)
	}
	want := []TargetCluster{{"m1", 1}, {"m2", 1}, {"m3", 1}}
	if diff := cmp.Diff(want, sortedTargets(res.Clusters)); diff != "" {
		t.Errorf("Schedule(%s) mismatch (-want +got):\n%s", c.Name, diff)
	}
}

// s34: a zone constraint only filters clusters without zones, as in
// Karmada; selection falls to the cluster constraint.
func TestDifferS34ZoneSpreadIsAFilter(t *testing.T) {
	c := loadCase(t, "s34-spread-zone-degrades-to-cluster")
	res, err := Schedule(c.input(t))
	checkCase(t, &c, res, err)
	if !rejectedFor(res, "d", "cluster(s) did not have zones property") {
		t.Errorf("Schedule(%s) rejected = %v; want d rejected for missing zones", c.Name, res.Rejected)
	}
}

// s50: spreadByLabel alone is rejected at selection, as in Karmada.
func TestDifferS50SpreadByLabelUnsupported(t *testing.T) {
	c := loadCase(t, "s50-spread-by-label-unsupported")
	res, err := Schedule(c.input(t))
	checkCase(t, &c, res, err)
}

// s51: a workload with requests scaled to 0 keeps its clusters with 0
// replicas; Karmada drops them all (and deletes the member copies).
func TestDifferS51ZeroReplicasKeepsClusters(t *testing.T) {
	c := loadCase(t, "s51-zero-replicas-with-requests-duplicated")
	res, err := Schedule(c.input(t))
	if err != nil {
		t.Fatalf("Schedule(%s) error = %v; want success", c.Name, err)
	}
	want := []TargetCluster{{"m1", 0}, {"m2", 0}}
	if diff := cmp.Diff(want, sortedTargets(res.Clusters)); diff != "" {
		t.Errorf("Schedule(%s) mismatch (-want +got):\n%s", c.Name, diff)
	}
}

// s53: an unset region maxGroups means no upper bound; Karmada finds no
// region combination and reports a misleading error.
func TestDifferS53RegionSpreadWithoutMaxGroups(t *testing.T) {
	c := loadCase(t, "s53-spread-region-without-maxgroups")
	res, err := Schedule(c.input(t))
	if err != nil {
		t.Fatalf("Schedule(%s) error = %v; want success", c.Name, err)
	}
	want := []TargetCluster{{"a", 4}}
	if diff := cmp.Diff(want, sortedTargets(res.Clusters)); diff != "" {
		t.Errorf("Schedule(%s) mismatch (-want +got):\n%s", c.Name, diff)
	}
}

// TestEveryMayDifferCaseHasATest fails when a new may-differ case appears
// without a test of its own above.
func TestEveryMayDifferCaseHasATest(t *testing.T) {
	covered := map[string]bool{"s29": true, "s34": true, "s50": true, "s51": true, "s53": true}
	for _, c := range loadCases(t) {
		id, _, _ := strings.Cut(c.Name, "-")
		if c.Conformance == "may-differ" && !covered[id] {
			t.Errorf("may-differ case %s has no test; choose a behaviour, document it and test it", c.Name)
		}
	}
}

func rejectedFor(res Result, cluster, reason string) bool {
	for _, r := range res.Rejected {
		if r.Cluster == cluster {
			for _, got := range r.Reasons {
				if got == reason {
					return true
				}
			}
		}
	}
	return false
}
