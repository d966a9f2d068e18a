package aggregate

import (
	"context"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
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
