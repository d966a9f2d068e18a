package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

var webRef = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}

func memberStatus(ready int) string {
	return fmt.Sprintf(`{"generation":1,"resourceTemplateGeneration":1,"observedGeneration":1,"replicas":%d,"readyReplicas":%d,"availableReplicas":%d,"updatedReplicas":%d}`, ready, ready, ready, ready)
}

func readyReplicas(b *workv1alpha1.ResourceBinding) int64 {
	raw, ok := fold.TemplateStatus(b)
	if !ok {
		return -1
	}
	var st struct{ ReadyReplicas int64 }
	if err := json.Unmarshal(raw, &st); err != nil {
		return -1
	}
	return st.ReadyReplicas
}

func healthOf(b *workv1alpha1.ResourceBinding, cluster string) configv1alpha1.ResourceHealth {
	for _, it := range b.Status.AggregatedStatus {
		if it.ClusterName == cluster {
			return it.Health
		}
	}
	return ""
}

func TestAggregatorReportsStaleAndRestart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding("m1", "m2"))
	e.heartbeat("m1", "m2")
	a, stop := e.start(Config{})

	report := func(a *Aggregator, cluster string, ready int) {
		r := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: fmt.Sprint(ready), Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, memberStatus(ready))}}
		if err := a.Report(ctx, cluster, r); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	// A burst of reports is coalesced into few writes.
	for i := range 10 {
		report(a, "m1", i%3)
	}
	report(a, "m1", 2)
	report(a, "m2", 1)
	b := e.waitBinding(webRef, "readyReplicas 3", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	if healthOf(b, "m1") != configv1alpha1.ResourceHealthy || healthOf(b, "m2") != configv1alpha1.ResourceHealthy || len(fold.StaleClusters(b)) != 0 {
		t.Errorf("items = %+v; want both Healthy, none stale", b.Status.AggregatedStatus)
	}
	if w := a.run.writes.Load(); w > 3 {
		t.Errorf("%d writes for 12 reports in a burst; want them coalesced", w)
	}

	// m2 stops heartbeating: its lease runs out at 40s.
	e.clock.Advance(30 * time.Second)
	e.heartbeat("m1")
	e.clock.Advance(11 * time.Second)
	b = e.waitBinding(webRef, "m2 stale", func(b *workv1alpha1.ResourceBinding) bool { return len(fold.StaleClusters(b)) == 1 })
	if got := fold.StaleClusters(b); got[0] != "m2" || healthOf(b, "m2") != configv1alpha1.ResourceUnknown || readyReplicas(b) != 2 {
		t.Errorf("stale %v, m2 health %s, readyReplicas %d; want m2 stale, Unknown, readyReplicas 2 (m1's only)", got, healthOf(b, "m2"), readyReplicas(b))
	}
	for _, it := range b.Status.AggregatedStatus {
		if it.ClusterName == "m2" && (!it.Applied || it.Status != nil) {
			t.Errorf("m2 item = %+v; want applied kept and no status", it)
		}
	}

	// A restarted aggregator (memory read back from the relayed records)
	// writes nothing.
	stop()
	rev := e.revision()
	a2, _ := e.start(Config{})
	deadline := time.Now().Add(waitTimeout)
	for a2.run.passes.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if got := e.revision(); got != rev || a2.run.writes.Load() != 0 {
		t.Errorf("after a restart: revision %d → %d, %d writes; want none", rev, got, a2.run.writes.Load())
	}

	// m2 comes back and reports again: fresh again.
	e.heartbeat("m2")
	report(a2, "m2", 1)
	e.waitBinding(webRef, "m2 fresh", func(b *workv1alpha1.ResourceBinding) bool {
		return len(fold.StaleClusters(b)) == 0 && readyReplicas(b) == 3 && healthOf(b, "m2") == configv1alpha1.ResourceHealthy
	})
}

// TestAggregatorAssignmentChangeWaitsForNewVersion: when a binding's write
// gives a cluster other replicas (a failover), that cluster's item is
// Unknown until its agent reports a newer version, and a report older
// than a later ack counts as Unknown too; an unchanged cluster stays
// Healthy.
func TestAggregatorAssignmentChangeWaitsForNewVersion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding("m1", "m2"))
	e.heartbeat("m1", "m2")
	a, stop := e.start(Config{})
	defer stop()
	report := func(cluster, version string) {
		r := &agentv1.StatusReport{WorkKey: workKey, Version: version, Digest: version, Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, memberStatus(3))}}
		if err := a.Report(ctx, cluster, r); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	report("m1", "v1")
	report("m2", "v1")
	healthIs := func(m1, m2 configv1alpha1.ResourceHealth) func(*workv1alpha1.ResourceBinding) bool {
		return func(b *workv1alpha1.ResourceBinding) bool { return healthOf(b, "m1") == m1 && healthOf(b, "m2") == m2 }
	}
	healthy, unknown := configv1alpha1.ResourceHealthy, configv1alpha1.ResourceUnknown
	b := e.waitBinding(webRef, "both Healthy", healthIs(healthy, healthy))

	b.Spec.Clusters[0].Replicas = 6 // m1 takes over a third cluster's replicas
	e.put(store.BindingKey(webRef), b)
	e.waitBinding(webRef, "m1 Unknown, m2 Healthy", healthIs(unknown, healthy))
	if err := a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
		t.Fatal(err)
	}
	report("m2", "v1") // anything that makes the binding flush again
	e.waitBinding(webRef, "m1 still Unknown after the ack of v2", healthIs(unknown, healthy))
	report("m1", "v2")
	e.waitBinding(webRef, "m1 Healthy on v2", healthIs(healthy, healthy))
}

// TestAssignmentAnsweredBeforeItsBindingIsSeen: an agent may ack the work
// rendered from a binding write before the aggregator's own watch brings
// that write (here the write is applied by hand after the ack). The
// cluster's item then waits for a newer version than the one held when
// the binding was written, not than the answer: m1, which acked v2 after
// the hub had seen the write, is not waited on; m2, which still holds v1,
// is. Once m2 answers too, nothing is waited on and the binding's
// supersessions are dropped. Both with relayed records and held in memory
// (Config.Local).
func TestAssignmentAnsweredBeforeItsBindingIsSeen(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			bkey := store.BindingKey(webRef)
			e.put(store.ObjectKey(webRef), deployment(t).Object)
			e.put(bkey, webBinding("m1", "m2"))
			var seen atomic.Int64 // what render would have read
			a, startRelay := e.relayOnly(Config{Local: local, Seen: seen.Load})
			startRelay()
			seen.Store(e.load(a))
			ack := func(cluster, version string) {
				t.Helper()
				if err := a.Ack(ctx, cluster, &agentv1.Ack{WorkKey: workKey, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
					t.Fatal(err)
				}
				waitFor(t, cluster+" holds "+version, func() bool { return a.observations(bkey)[cluster].Latest == version })
			}
			ack("m1", "v1")
			ack("m2", "v1")

			nb := webBinding("m1", "m2")
			nb.Spec.Clusters[0].Replicas, nb.Spec.Clusters[1].Replicas = 4, 2
			data, err := json.Marshal(nb)
			if err != nil {
				t.Fatal(err)
			}
			written, err := e.st.Put(ctx, bkey, data)
			if err != nil {
				t.Fatal(err)
			}
			seen.Store(written) // rendered and sent to m1, which answers at once
			ack("m1", "v2")
			a.applyBinding(view.Change{Key: bkey, Object: viewObject(t, bkey, data, written)})

			got := a.supersededFor(bkey, nb, a.observations(bkey))
			if want := map[string]string{"m2": "v1"}; !maps.Equal(got, want) {
				t.Errorf("clusters waited on for a newer version = %v; want %v (m1 already answered the write with v2)", got, want)
			}
			ack("m2", "v2")
			if got := a.supersededFor(bkey, nb, a.observations(bkey)); len(got) != 0 {
				t.Errorf("clusters waited on after both answered = %v; want none", got)
			}
			if _, kept := a.run.superseded[bkey]; kept {
				t.Error("the binding's emptied supersessions are kept; want them dropped (a map keeps its buckets: a binding placed on 1,000 clusters kept 1,000 entries' worth)")
			}
		})
	}
}

// TestCachedBindingKeepsNoItems: the cached binding holds no items;
// those of clusters reported are built from what is held at every
// flush, and only a binding with an item of a cluster nothing is held for
// (other than the empty Unknown one built anyway) is read whole from the
// store when it is flushed (entry.keeps). Here m3 never reported: its
// item is the empty one. After a restart of the aggregator, m1's and m2's
// relayed records are read back, and m3's report completes the status.
func TestCachedBindingKeepsNoItems(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bkey := store.BindingKey(webRef)
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(bkey, webBinding("m1", "m2", "m3"))
	e.heartbeat("m1", "m2", "m3")
	a, stop := e.start(Config{})
	report := func(cluster string, ready int) {
		r := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: fmt.Sprint(ready), Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, memberStatus(ready))}}
		if err := a.Report(ctx, cluster, r); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	report("m1", 1)
	report("m2", 1)
	e.waitBinding(webRef, "m1 and m2 healthy", func(b *workv1alpha1.ResourceBinding) bool {
		return healthOf(b, "m1") == configv1alpha1.ResourceHealthy && healthOf(b, "m2") == configv1alpha1.ResourceHealthy
	})
	stop()
	cached := a.run.bindings[bkey]
	if n := len(cached.b.Status.AggregatedStatus); n != 0 || cached.keeps {
		t.Errorf("cached binding: %d items, keeps %v; want none and false (m3's item is the empty one)", n, cached.keeps)
	}

	a, _ = e.start(Config{})
	report("m3", 1)
	b := e.waitBinding(webRef, "readyReplicas 3", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	for _, c := range []string{"m1", "m2", "m3"} {
		if healthOf(b, c) != configv1alpha1.ResourceHealthy {
			t.Errorf("items after m3 reports = %+v; want all three Healthy", b.Status.AggregatedStatus)
			break
		}
	}
}

// TestNewTargetsNothingHeldNotRecorded: a binding's first placement on
// clusters for which nothing is held nor written records no
// supersessions (their items are Unknown until their agents report
// anyway); a new target with an item written and nothing held still
// counts as Unknown until its agent reports, and one whose agent holds
// an older version waits for a newer one.
func TestNewTargetsNothingHeldNotRecorded(t *testing.T) {
	leases := liveness.New(liveness.Config{LeaseDuration: 40 * time.Second})
	a := New(nil, nil, leases, Config{Local: true, Seen: func() int64 { return 1 }}, hclog.NewNullLogger())
	key := store.BindingKey(webRef)
	var clusters []string
	for i := range 100 {
		clusters = append(clusters, fmt.Sprintf("member-%03d", i))
	}
	a.noteAssignments(key, webBinding(), webBinding(clusters...), 5)
	if n := len(a.run.superseded[key]); n != 0 {
		t.Fatalf("first placement on 100 clusters, nothing held: %d supersessions recorded; want none", n)
	}

	if err := a.Ack(context.Background(), "m-held", &agentv1.Ack{WorkKey: workKey, Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
		t.Fatal(err)
	}
	nb := webBinding("m-held", "m-written", "m-new")
	nb.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m-written", Health: configv1alpha1.ResourceHealthy}}
	a.noteAssignments(key, webBinding(), nb, 5)
	want := map[string]supersession{"m-held": {version: "v1", replicas: -1}, "m-written": {version: "", replicas: -1}}
	if got := a.run.superseded[key]; !maps.Equal(got, want) {
		t.Errorf("supersessions %v; want %v", got, want)
	}
}
