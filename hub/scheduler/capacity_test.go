package scheduler

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

// capacityBeat renews a Ready lease whose summary says pods of allocatable
// are allocated, as an agent's heartbeat does while pods start.
func (e *env) capacityBeat(allocatable, allocated string, names ...string) {
	for _, n := range names {
		e.leases.Heartbeat(n, &agentv1.Heartbeat{
			Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
			ResourceSummary: &agentv1.ResourceSummary{
				Allocatable: map[string]string{"pods": allocatable},
				Allocated:   map[string]string{"pods": allocated},
			},
			ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		})
	}
}

// TestCapacityChangeReexaminesOnlyCapacityBoundBindings: a heartbeat that
// changes nothing but a cluster's capacity makes the loop look again only
// at the bindings whose decision can depend on it — here a Duplicated
// binding selecting one cluster by available replicas and a binding
// waiting for capacity — and a look that decides what the binding holds
// writes nothing. A plain Duplicated binding and a scheduled Divided one
// (not rebalanced, as in Karmada) are left alone.
func TestCapacityChangeReexaminesOnlyCapacityBoundBindings(t *testing.T) {
	e := newEnv(t, time.Hour)
	all := []string{"m1", "m2", "m3"}
	for _, n := range all {
		e.putCluster(n)
	}
	e.capacityBeat("100", "0", all...)
	ref := func(name string) store.ObjectRef {
		return store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: name}
	}
	spread := duplicated()
	spread.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}
	aggregated := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated,
	}}
	e.putBinding(ref("dup"), binding(duplicated(), 3))
	e.putBinding(ref("dyn"), binding(dynamic(), 6))
	e.putBinding(ref("spread"), binding(spread, 3))
	e.putBinding(ref("starved"), binding(aggregated, 500))
	l, _ := e.start(Config{})
	e.waitBinding(ref("dup"), "dup on 3", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 3 })
	e.waitBinding(ref("dyn"), "dyn with 6", func(b *workv1alpha1.ResourceBinding) bool { _, sum := replicasOn(b); return sum == 6 })
	e.waitBinding(ref("spread"), "spread on 1", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 1 })
	e.waitBinding(ref("starved"), "starved unschedulable", func(b *workv1alpha1.ResourceBinding) bool {
		c := meta.FindStatusCondition(b.Status.Conditions, placement.ConditionScheduled)
		return c != nil && c.Reason == placement.ReasonUnschedulable
	})
	e.settle(l)

	revs := map[string]int64{}
	for _, n := range []string{"dup", "dyn", "spread"} {
		_, revs[n] = e.getBinding(ref(n))
	}
	examined := l.examined.Load()
	e.capacityBeat("100", "7", all...)
	e.settle(l)
	if got := l.examined.Load() - examined; got != 2 {
		t.Errorf("a capacity change examined %d bindings; want 2 (spread, starved)", got)
	}
	// The starved binding's condition names the replicas available: it
	// is written with the new figure.
	for n, rev := range revs {
		if _, now := e.getBinding(ref(n)); now != rev {
			t.Errorf("binding %s written (revision %d → %d) by a capacity change that changes no decision; want no write", n, rev, now)
		}
	}

	// Capacity enough for the starved binding: it is scheduled.
	e.capacityBeat("200", "0", all...)
	e.waitBinding(ref("starved"), "starved scheduled", func(b *workv1alpha1.ResourceBinding) bool { _, sum := replicasOn(b); return sum == 500 })
}

// TestAggregatedStatusWriteIsNotReexamined: hub/aggregate's writes of a
// binding's aggregated status and template-status annotation, several per
// binding while its replicas get ready, make the loop look at the binding again only when Step reads that
// status (an eviction task waiting for health, application failover).
func TestAggregatedStatusWriteIsNotReexamined(t *testing.T) {
	e := newEnv(t, time.Hour)
	all := []string{"m1", "m2", "m3"}
	for _, n := range all {
		e.putCluster(n)
	}
	e.heartbeat(all...)
	e.putBinding(webRef, binding(duplicated(), 3))
	l, _ := e.start(Config{})
	e.waitBinding(webRef, "Duplicated on 3", func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == 3 })
	e.settle(l)

	health := func(h configv1alpha1.ResourceHealth) func(*workv1alpha1.ResourceBinding) {
		return func(b *workv1alpha1.ResourceBinding) {
			if b.Annotations == nil {
				b.Annotations = map[string]string{}
			}
			b.Annotations[fold.AnnotationTemplateStatus] = `{"readyReplicas":` + fmt.Sprint(len(h)) + `}`
			b.Status.AggregatedStatus = nil
			for _, n := range all {
				b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{ClusterName: n, Applied: true, Health: h})
			}
		}
	}
	examined := l.examined.Load()
	e.updateBinding(webRef, health(configv1alpha1.ResourceUnhealthy))
	e.settle(l)
	if got := l.examined.Load() - examined; got != 0 {
		t.Errorf("an aggregated-status write examined the binding %d times; want 0", got)
	}

	// With application failover, Step reads the health: examined.
	e.updateBinding(webRef, func(b *workv1alpha1.ResourceBinding) {
		b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{}}
	})
	// The first settle sees the pass that decided it end, with its write
	// of the binding; the second sees that write's event processed, so
	// that the count below is the health write's alone (counting passes
	// raced with that event's pass).
	e.settle(l)
	e.settle(l)
	examined = l.examined.Load()
	e.updateBinding(webRef, health(configv1alpha1.ResourceHealthy))
	e.settle(l)
	if got := l.examined.Load() - examined; got != 1 {
		t.Errorf("an aggregated-status write of a binding with application failover examined it %d times; want 1", got)
	}
}
