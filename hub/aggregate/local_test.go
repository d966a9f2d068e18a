package aggregate

import (
	"context"
	"fmt"
	"testing"
	"time"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
)

// TestLocalHoldsInMemory: with Config.Local (the only replica) an ack or
// report is held when Ack or Report returns, nothing is written under
// the relayed prefix, records an earlier relaying hub left are deleted,
// a deletion ack forgets the work, a superseded report is discarded, and
// a removed cluster is forgotten by Prune.
func TestLocalHoldsInMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	left, err := encodeHeld(withOrd(heldOf(Observation{Latest: "v0", Report: report("v0")}), 1), workKey, "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Put(ctx, store.ReportKey("m9", workKey), left); err != nil {
		t.Fatal(err)
	}
	a, _ := e.start(Config{Local: true})
	e.goRun("prune", a.Prune)
	waitFor(t, "the records an earlier hub left deleted", func() bool {
		n, err := e.st.Count(ctx, store.ReportsPrefix)
		return err == nil && n == 0
	})

	for _, c := range []string{"m1", "m2"} {
		if err := a.Report(ctx, c, report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, "{}"))); err != nil {
			t.Fatal(err)
		}
		if d, _ := a.Digests(ctx, c); d[workKey] != (syncstate.Digest{Version: "v1", Digest: "d-v1"}) {
			t.Errorf("Digests(%s) right after Report = %v; want v1's digest held at once", c, d)
		}
	}
	if err := a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
		t.Fatal(err)
	}
	if err := a.Report(ctx, "m1", report("v1")); err != nil { // late: v2 was acked after it
		t.Fatal(err)
	}
	obs := a.observations("/tether/bindings/" + workKey)["m1"]
	if obs.Latest != "v2" || obs.Ack.GetVersion() != "v2" || len(obs.Report.GetManifests()) != 1 {
		t.Errorf("m1 observation = %+v; want the v2 ack and the first v1 report (the late one discarded)", obs)
	}
	if err := a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Result: agentv1.ApplyResult_APPLY_RESULT_DELETED}); err != nil {
		t.Fatal(err)
	}
	if d, _ := a.Digests(ctx, "m1"); len(d) != 0 {
		t.Errorf("Digests(m1) after the deletion ack = %v; want none", d)
	}

	e.put(store.AgentKey("m2"), map[string]any{"cluster": "m2", "removed": time.Now().UTC()})
	e.waitDigests(a, "m2", map[string]syncstate.Digest{})
	if n, err := e.st.Count(ctx, store.ReportsPrefix); err != nil || n != 0 {
		t.Errorf("relayed records written by a local aggregator: %d, %v; want none", n, err)
	}
}

// TestRestartedLocalHubKeepsItemsAsWritten: a restarted single hub holds
// nothing; its aggregator, which caches no items, reads a binding whole
// when it flushes it (entry.keeps) and keeps the items as written until
// each agent reports again: the restart writes nothing, and after one
// agent's report the other's item still counts in the template status.
// Once both reported, nothing is kept and the binding is no longer read.
func TestRestartedLocalHubKeepsItemsAsWritten(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bkey := store.BindingKey(webRef)
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(bkey, webBinding("m1", "m2"))
	e.heartbeat("m1", "m2")
	report := func(a *Aggregator, cluster string, ready int) {
		r := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: fmt.Sprint(ready), Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, memberStatus(ready))}}
		if err := a.Report(ctx, cluster, r); err != nil {
			t.Fatalf("Report: %v", err)
		}
	}
	a, stop := e.start(Config{Local: true})
	report(a, "m1", 2)
	report(a, "m2", 1)
	e.waitBinding(webRef, "readyReplicas 3", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	stop()

	rev := e.revision()
	a2, stop2 := e.start(Config{Local: true})
	waitFor(t, "a flush pass", func() bool { return a2.run.passes.Load() > 0 })
	time.Sleep(300 * time.Millisecond)
	if got := e.revision(); got != rev || a2.run.writes.Load() != 0 {
		t.Errorf("after a restart holding nothing: revision %d → %d, %d writes; want none", rev, got, a2.run.writes.Load())
	}
	report(a2, "m1", 3)
	b := e.waitBinding(webRef, "m1's report written", func(b *workv1alpha1.ResourceBinding) bool { return itemStatus(b, "m1") == memberStatus(3) })
	if healthOf(b, "m2") != configv1alpha1.ResourceHealthy || readyReplicas(b) != 4 {
		t.Errorf("after m1 reports: m2 %s, readyReplicas %d; want m2's item kept Healthy, 4 (3 + m2's 1)", healthOf(b, "m2"), readyReplicas(b))
	}
	report(a2, "m2", 2)
	e.waitBinding(webRef, "readyReplicas 5", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 5 })
	waitFor(t, "the write cached", func() bool { return a2.run.writes.Load() == 2 })
	stop2()
	if c := a2.run.bindings[bkey]; c.keeps || len(c.b.Status.AggregatedStatus) != 0 {
		t.Errorf("cached binding once both reported: keeps %v, %d items; want false, none", c.keeps, len(c.b.Status.AggregatedStatus))
	}
}

// itemStatus is the status of cluster's item in b, "" if none.
func itemStatus(b *workv1alpha1.ResourceBinding, cluster string) string {
	for _, it := range b.Status.AggregatedStatus {
		if it.ClusterName == cluster && it.Status != nil {
			return string(it.Status.Raw)
		}
	}
	return ""
}
