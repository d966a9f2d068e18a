package placement

import (
	"fmt"
	"testing"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// TestReadsCapacity checks the predicate both ways: a placement it says
// does not read capacity schedules the same under every capacity snapshot
// tried, and every placement it says reads capacity is shown to, by some
// pair of snapshots.
func TestReadsCapacity(t *testing.T) {
	spread := []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}
	static := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	tests := []struct {
		name      string
		p         policyv1alpha1.Placement
		replicas  int32
		wantReads bool
	}{
		{"Duplicated", policyv1alpha1.Placement{}, 3, false},
		{"Duplicated, no replicas", policyv1alpha1.Placement{}, 0, false},
		{"static weights", policyv1alpha1.Placement{ReplicaScheduling: static}, 6, false},
		{"static weights ignore spread", policyv1alpha1.Placement{ReplicaScheduling: static, SpreadConstraints: spread}, 6, false},
		{"Duplicated with a spread constraint", policyv1alpha1.Placement{SpreadConstraints: spread}, 3, true},
		{"Aggregated", policyv1alpha1.Placement{ReplicaScheduling: aggregatedPref}, 6, true},
		{"dynamic weights", policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights}, 6, true},
	}
	snapshots := [][]int32{{10, 10, 10}, {1, 50, 3}, {50, 1, 2}, {0, 0, 100}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadsCapacity(&tt.p, tt.replicas); got != tt.wantReads {
				t.Fatalf("ReadsCapacity = %v; want %v", got, tt.wantReads)
			}
			results := map[string]bool{}
			for _, caps := range snapshots {
				in := Input{Placement: tt.p, Workload: deployment(tt.replicas),
					Clusters: []Cluster{cl("a", caps[0]), cl("b", caps[1]), cl("c", caps[2])}}
				res, err := Schedule(in)
				results[fmt.Sprint(sortedTargets(res.Clusters), err)] = true
			}
			if differs := len(results) > 1; differs != tt.wantReads {
				t.Errorf("results under %d capacity snapshots: %v; ReadsCapacity %v", len(snapshots), results, tt.wantReads)
			}
		})
	}
}
