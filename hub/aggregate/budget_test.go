package aggregate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
)

// floodReport is the i-th report of a flood: version v1, a status that
// changes every time.
func floodReport(i int) *agentv1.StatusReport {
	r := report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, fmt.Sprintf(`{"observedGeneration":%d}`, i)))
	r.Digest = fmt.Sprintf("d%d", i)
	return r
}

// recordWrites counts the puts of cluster's relayed records in the store.
func (e *env) recordWrites(cluster string) func() int {
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	events := e.st.Watch(ctx, store.ReportsPrefix, e.revision()+1)
	n := make(chan int, 1)
	n <- 0
	go func() {
		for ev := range events {
			if c, _, ok := store.ParseReportKey(ev.KV.Key); ok && c == cluster && ev.Type == store.EventPut {
				n <- <-n + 1
			}
		}
	}()
	return func() int { v := <-n; n <- v; return v }
}

// TestClusterBudget: an agent flooding changing reports has them
// coalesced to the latest and written at its cluster's budget, counted;
// a neighbour's report on the same replica is written at once; the
// flood's latest status is written in the end.
func TestClusterBudget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	counts := guard.NewCounts()
	a, start := e.relayOnly(Config{Replica: "a", Counts: counts, ClusterBudget: ClusterBudget{RecordRate: 2, RecordBurst: 2}})
	flood := e.recordWrites("flood")
	start()
	const n = 400
	deadline := time.Now().Add(2 * time.Second)
	for i := 0; i < n; i++ {
		if err := a.Report(ctx, "flood", floodReport(i)); err != nil {
			t.Fatalf("flood report %d: %v", i, err)
		}
		time.Sleep(time.Until(deadline) / time.Duration(n-i))
	}
	calm := time.Now()
	if err := a.Report(ctx, "calm", report("v1")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the neighbour's report relayed", func() bool { _, _, ok := a.held(workRef{"calm", workKey}); return ok })
	if d := time.Since(calm); d > 2*time.Second {
		t.Errorf("the neighbour's report took %s to be relayed behind the flood; want under 2 s", d)
	}
	if w := flood(); w > 2+2*3 {
		t.Errorf("%d records of the flooding cluster written in about 2 s at 2 a second (bursts of 2); want at most 8", w)
	}
	if c := counts.Get("aggregate", kindOverBudget); c == 0 {
		t.Errorf("%s counted 0; want the flood's coalesced updates counted", kindOverBudget)
	}
	waitFor(t, "the flood's latest report relayed", func() bool {
		h, _, ok := a.held(workRef{"flood", workKey})
		return ok && h.content().report.digest == fmt.Sprintf("d%d", n-1)
	})
}

// TestClusterQueueBound: past its share of the relay queue a cluster's
// updates are refused with ErrClusterQueueFull (an agentapi.ErrLimit,
// which ends only its stream); a neighbour's are accepted.
func TestClusterQueueBound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	counts := guard.NewCounts()
	a, _ := e.relayOnly(Config{Counts: counts, ClusterBudget: ClusterBudget{MaxQueuedBytes: 200}}) // relay not running
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		ack := &agentv1.Ack{WorkKey: fmt.Sprintf("apps/Deployment/prod/web-%d", i), Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}
		err = a.Ack(ctx, "flood", ack)
	}
	if !errors.Is(err, ErrClusterQueueFull) || !errors.Is(err, agentapi.ErrLimit) {
		t.Fatalf("acks of 100 works past a 200-byte cluster queue: %v; want ErrClusterQueueFull, an agentapi.ErrLimit", err)
	}
	if got := counts.Get("aggregate", kindClusterQueueFull); got != 1 {
		t.Errorf("%s counted %d; want 1", kindClusterQueueFull, got)
	}
	if err := a.Report(ctx, "calm", report("v1")); err != nil {
		t.Errorf("a neighbour's report while the flooding cluster's queue is full: %v; want accepted", err)
	}
}

// TestLocalClusterBudget: a single hub (Config.Local) holds a flooding
// cluster's reports at its budget, coalesced, and its neighbour's at once.
func TestLocalClusterBudget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.start(Config{Local: true, ClusterBudget: ClusterBudget{RecordRate: 2, RecordBurst: 2}})
	for i := 0; i < 200; i++ {
		if err := a.Report(ctx, "flood", floodReport(i)); err != nil {
			t.Fatalf("flood report %d: %v", i, err)
		}
	}
	if err := a.Report(ctx, "calm", report("v1")); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := a.held(workRef{"calm", workKey}); !ok {
		t.Errorf("the neighbour's report not held when Report returned; want held at once")
	}
	a.mu.Lock()
	rev := a.localRev
	a.mu.Unlock()
	if rev > 4 {
		t.Errorf("%d updates held for 200 reports of a cluster with a budget of 2 (bursts of 2); want at most 4", rev)
	}
	waitFor(t, "the flood's latest report held", func() bool {
		h, _, ok := a.held(workRef{"flood", workKey})
		return ok && h.content().report.digest == "d199"
	})
}

// TestLocalRemovedClusterQueueDropped: a single hub forgets a removed
// cluster's updates still waiting for its budget with what it holds, so
// that they are not held after the removal.
func TestLocalRemovedClusterQueueDropped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.start(Config{Local: true, ClusterBudget: ClusterBudget{RecordRate: 5, RecordBurst: 1}})
	e.goRun("prune", a.Prune)
	for i := range 3 {
		if err := a.Report(ctx, "gone", floodReport(i)); err != nil {
			t.Fatal(err)
		}
	}
	e.put(store.AgentKey("gone"), map[string]any{"cluster": "gone", "removed": time.Now().UTC()})
	waitFor(t, "the removed cluster forgotten", func() bool { _, _, ok := a.held(workRef{"gone", workKey}); return !ok })
	time.Sleep(time.Second) // the budget refills five times over
	if _, _, ok := a.held(workRef{"gone", workKey}); ok {
		t.Errorf("the removed cluster's queued report held after its removal; want it dropped")
	}
	if n := a.queuedWorks(); n != 0 {
		t.Errorf("%d works still queued; want none", n)
	}
}
