package scheduler

import (
	"testing"
	"time"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// TestWriteKeepsAggregatedItems: the loop decides on the view's bindings,
// which lack the aggregated status items hub/aggregate writes; a write of
// its decision (a cluster joins a Duplicated binding) still stores the
// items the binding had.
func TestWriteKeepsAggregatedItems(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.putCluster("m1")
	e.heartbeat("m1")
	ref := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}
	b := scheduled(binding(duplicated(), 1, tc("m1", 1)))
	b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy}}
	e.putBinding(ref, b)
	l, _ := e.start(Config{})
	e.settle(l)
	e.putCluster("m2")
	e.heartbeat("m2")
	got := e.waitBinding(ref, "on m1 and m2", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 2 })
	if items := got.Status.AggregatedStatus; len(items) != 1 || items[0].ClusterName != "m1" || items[0].Health != configv1alpha1.ResourceHealthy {
		t.Fatalf("aggregated status after the scheduler's write = %+v; want m1's Healthy item kept", items)
	}
}
