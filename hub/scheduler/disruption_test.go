package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
)

func TestCensusAndFullDisruption(t *testing.T) {
	deleting := storedCluster("gone")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	stored := []clusterv1alpha1.Cluster{storedCluster("m1"), storedCluster("m2"), storedCluster("m3"), deleting}
	l := func(name string, st lease.State) lease.Lease { return leaseOf(name, st, t0, nil) }
	tests := []struct {
		name            string
		stored          []clusterv1alpha1.Cluster
		leases          []lease.Lease
		graceUntil      time.Time
		wantUnreachable int
		wantTotal       int
		wantDisrupted   bool
	}{
		{"all Ready", stored, []lease.Lease{l("m1", lease.StateReady), l("m2", lease.StateReady), l("m3", lease.StateNotReady)}, t0, 0, 3, false},
		{"one of three away: a partition", stored, []lease.Lease{l("m1", lease.StateReady), l("m2", lease.StateReady), l("m3", lease.StateUnknown)}, t0, 1, 3, false},
		{"two of three away", stored, []lease.Lease{l("m1", lease.StateReady), l("m2", lease.StateUnknown), l("m3", lease.StateUnknown)}, t0, 2, 3, true},
		{"all away (the hub resumed from a pause)", stored, []lease.Lease{l("m1", lease.StateUnknown), l("m2", lease.StateUnknown), l("m3", lease.StateUnknown), l("gone", lease.StateUnknown)}, t0, 3, 3, true},
		{"no lease within the start-up grace: not counted", stored, nil, t0.Add(time.Second), 0, 3, false},
		{"no lease after the grace: away (a restart nobody reconnected to)", stored, nil, t0, 3, 3, true},
		{"the only cluster away: a partition, not a disruption", stored[:1], []lease.Lease{l("m1", lease.StateUnknown)}, t0, 1, 1, false},
		{"one of two away: under 55 %", stored[:2], []lease.Lease{l("m1", lease.StateUnknown), l("m2", lease.StateReady)}, t0, 1, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, n := Census(tt.stored, tt.leases, t0, tt.graceUntil)
			if u != tt.wantUnreachable || n != tt.wantTotal || FullDisruption(u, n) != tt.wantDisrupted {
				t.Errorf("Census = %d of %d, FullDisruption %v; want %d of %d, %v", u, n, FullDisruption(u, n), tt.wantUnreachable, tt.wantTotal, tt.wantDisrupted)
			}
		})
	}
	// 10 clusters: 5 away is 50 %, 6 is 60 %.
	if FullDisruption(5, 10) || !FullDisruption(6, 10) {
		t.Errorf("FullDisruption(5, 10), (6, 10) = %v, %v; want false, true (threshold 55 %%)", FullDisruption(5, 10), FullDisruption(6, 10))
	}
}
