package aggregate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	clientv3 "go.etcd.io/etcd/client/v3"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
)

// relayOnly returns an aggregator whose Relay runs only once started.
func (e *env) relayOnly(cfg Config) (a *Aggregator, start func() (stop func())) {
	cfg.Clock = e.clock
	a = New(e.st, newInterpreter(e.t), e.leases, cfg, hclog.NewNullLogger())
	return a, func() func() { return e.goRun("relay", a.Relay) }
}

// storedHeld reads the relayed record of workKey in cluster.
func (e *env) storedHeld(cluster string) held {
	e.t.Helper()
	kv, err := e.st.Get(e.ctx, store.ReportKey(cluster, workKey))
	if err != nil {
		e.t.Fatalf("get relayed record: %v", err)
	}
	h, err := decodeHeld(kv.Value)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// TestRelayKeepsTheNewerAcrossReplicas: replica A received m1's report of
// v1 but could not write it (etcd unreachable from it: here, its Relay
// not running); the agent moved to replica B, which relayed the ack of
// v2. When A writes at last, its stored revision is out of date: it reads
// the record back, finds the newer ack and discards its report. Every
// replica then holds v2.
func TestRelayKeepsTheNewerAcrossReplicas(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, startA := e.relayOnly(Config{Replica: "a"})
	if err := a.Report(ctx, "m1", report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, "{}"))); err != nil {
		t.Fatal(err)
	}
	b, startB := e.relayOnly(Config{Replica: "b"})
	startB()
	if err := b.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b relayed the ack", func() bool { return b.observations(store.BindingsPrefix + workKey)["m1"].Latest == "v2" })
	startA()
	waitFor(t, "a's queue written or discarded", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.queue.deltas) == 0 && a.queue.conflicts > 0
	})
	waitFor(t, "a holds the stored record", func() bool { return a.observations(store.BindingsPrefix + workKey)["m1"].Latest == "v2" })
	if h := e.storedHeld("m1"); h.obs(workKey).Latest != "v2" || h.obs(workKey).Report != nil || h.obs(workKey).Ack.GetVersion() != "v2" {
		t.Errorf("stored record: latest %q, report %v, ack %v; want the v2 ack alone (a's older report discarded)", h.obs(workKey).Latest, h.obs(workKey).Report, h.obs(workKey).Ack)
	}
	if d, _ := a.Digests(ctx, "m1"); len(d) != 0 {
		t.Errorf("a's digests of m1 = %v; want none (its report was older)", d)
	}
}

// TestRelayQueueBound: with the relay stopped, the queue takes updates up
// to its bound, coalescing those of one work; past it Ack and Report fail
// with ErrQueueFull, counted. Once the relay runs, what was queued is
// written.
func TestRelayQueueBound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	counts := guard.NewCounts()
	a, start := e.relayOnly(Config{MaxQueued: 2, Counts: counts})
	for i := range 5 { // one work: coalesced
		if err := a.Report(ctx, "m1", report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"n":`+itoa(i)+`}`))); err != nil {
			t.Fatalf("report %d of one work: %v", i, err)
		}
	}
	if err := a.Report(ctx, "m2", report("v1")); err != nil {
		t.Fatalf("report of a second work: %v", err)
	}
	err := a.Ack(ctx, "m3", &agentv1.Ack{WorkKey: workKey, Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED})
	if !errors.Is(err, ErrQueueFull) {
		t.Errorf("Ack of a third work with a queue of 2 = %v; want ErrQueueFull", err)
	}
	if got := counts.Get("aggregate", kindQueueFull); got != 1 {
		t.Errorf("%s counted %d; want 1", kindQueueFull, got)
	}
	start()
	e.waitDigests(a, "m1", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	if s := string(e.storedHeld("m1").obs(workKey).Report.GetManifests()[0].GetStatusJson()); s != `{"n":4}` {
		t.Errorf("relayed status %s; want the last report's {\"n\":4}", s)
	}
	if err := a.Ack(ctx, "m3", &agentv1.Ack{WorkKey: workKey, Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}); err != nil {
		t.Errorf("Ack once the queue drained: %v", err)
	}
}

// TestPruneRemovedClusters: the leader deletes the relayed records of a
// cluster whose agent record is a tombstone, those found when it starts
// and those written later; other clusters' stay.
func TestPruneRemovedClusters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.start(Config{})
	for _, c := range []string{"m1", "m2", "m3"} {
		if err := a.Report(ctx, c, report("v1")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{"m1", "m2", "m3"} {
		e.waitDigests(a, c, map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	}
	removed := func(c string) {
		e.put(store.AgentKey(c), map[string]any{"cluster": c, "removed": time.Now().UTC()})
	}
	removed("m1")
	e.goRun("prune", a.Prune)
	e.waitDigests(a, "m1", map[string]syncstate.Digest{})
	removed("m2")
	e.waitDigests(a, "m2", map[string]syncstate.Digest{})
	// A replica relaying late for a removed cluster.
	late, err := encodeHeld(withOrd(heldOf(Observation{Latest: "v1", Report: report("v1")}), 1), workKey, "late")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Put(ctx, store.ReportKey("m1", workKey), late); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the late record of m1 deleted", func() bool {
		n, err := e.st.Count(ctx, store.ReportsOf("m1"))
		return err == nil && n == 0
	})
	if d, _ := a.Digests(ctx, "m3"); len(d) != 1 {
		t.Errorf("Digests(m3) = %v; want its report kept", d)
	}
	data, _ := json.Marshal(map[string]any{"cluster": "m2"}) // re-registered
	if _, err := e.st.Put(ctx, store.AgentKey("m2"), data); err != nil {
		t.Fatal(err)
	}
	if err := a.Report(ctx, "m2", report("v1")); err != nil {
		t.Fatal(err)
	}
	e.waitDigests(a, "m2", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFollowListsAgain: a follower that lists again (after a compacted
// watch, or restarted) holds what the store holds: records deleted or
// written while it was not watching are forgotten or held.
func TestFollowListsAgain(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, start := e.relayOnly(Config{})
	stop := start()
	for _, c := range []string{"m1", "m2"} {
		if err := a.Report(ctx, c, report("v1")); err != nil {
			t.Fatal(err)
		}
	}
	e.waitDigests(a, "m2", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	e.waitDigests(a, "m1", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	stop()
	if _, err := e.st.Delete(ctx, store.ReportKey("m2", workKey), 0); err != nil {
		t.Fatal(err)
	}
	m3, err := encodeHeld(withOrd(heldOf(Observation{Latest: "v3", Report: report("v3")}), 1), workKey, "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.Put(ctx, store.ReportKey("m3", workKey), m3); err != nil {
		t.Fatal(err)
	}
	// More records than one list page, of another cluster.
	var ops []clientv3.Op
	for i := range relayListPage + 10 {
		key := fmt.Sprintf("apps/Deployment/prod/w%03d", i)
		ops = append(ops, clientv3.OpPut(store.ReportKey("m4", key), string(m3)))
		if len(ops) == 100 || i == relayListPage+9 {
			if _, err := e.st.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	rev := e.revision()
	if err := e.st.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	e.goRun("relay again", a.Relay)
	e.waitDigests(a, "m3", map[string]syncstate.Digest{workKey: {Version: "v3", Digest: "d-v3"}})
	e.waitDigests(a, "m2", map[string]syncstate.Digest{})
	e.waitDigests(a, "m1", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	waitFor(t, fmt.Sprintf("m4's %d records (more than one list page) held", relayListPage+10), func() bool {
		d, _ := a.Digests(ctx, "m4")
		return len(d) == relayListPage+10
	})
}

// TestUnchangedNotRewritten: an agent repeating the ack and the report
// the hub holds (a flood of unchanged reports) makes no relay write and
// no new record in memory; a changed report is written.
func TestUnchangedNotRewritten(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, start := e.relayOnly(Config{Replica: "a"})
	start()
	ack := &agentv1.Ack{WorkKey: workKey, Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}
	rep := report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"readyReplicas":3}`))
	if err := a.Ack(ctx, "m1", ack); err != nil {
		t.Fatal(err)
	}
	if err := a.Report(ctx, "m1", rep); err != nil {
		t.Fatal(err)
	}
	e.waitDigests(a, "m1", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
	written := func() uint64 {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.queue.written
	}
	waitFor(t, "the queue drained", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.queue.deltas) == 0 && a.queue.flushing == 0
	})
	before := written()
	_, rev, _ := a.held(workRef{"m1", workKey})
	for range 50 {
		if err := a.Ack(ctx, "m1", ack); err != nil {
			t.Fatal(err)
		}
		if err := a.Report(ctx, "m1", rep); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // spread over several relay intervals
	}
	waitFor(t, "the queue drained", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.queue.deltas) == 0 && a.queue.flushing == 0
	})
	if got := written(); got != before {
		t.Errorf("relay wrote %d records for 50 unchanged acks and reports; want 0", got-before)
	}
	if _, got, _ := a.held(workRef{"m1", workKey}); got != rev {
		t.Errorf("held record moved from revision %d to %d; want unchanged", rev, got)
	}
	changed := report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"readyReplicas":2}`))
	changed.Digest = "d-changed"
	if err := a.Report(ctx, "m1", changed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the changed report written", func() bool { return written() == before+1 })
}

// TestRelayOrderWithoutClocks: replica a's clock runs an hour ahead of
// b's. a received m1's report and could not write it yet (its Relay not
// running); the store moved on; the agent moved to b, which received a
// newer report of the same version and relayed it. When a writes at last,
// its report is older than the stored one whatever its clock says: every
// replica ends up holding b's.
func TestRelayOrderWithoutClocks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, startA := e.relayOnly(Config{Replica: "a"})
	a.now = func() time.Time { return time.Now().Add(time.Hour) }
	old := report("v1", manifest("web", agentv1.Health_HEALTH_UNHEALTHY, true, `{"readyReplicas":1}`))
	old.Digest = "old"
	if err := a.Report(ctx, "m1", old); err != nil {
		t.Fatal(err)
	}
	e.put("/tether/test/elsewhere", map[string]string{"a": "write"}) // the store moves on: another component's write
	b, startB := e.relayOnly(Config{Replica: "b"})
	startB() // lists the relayed records: b has read the store since
	waitFor(t, "b has read the store", func() bool { return e.st.Seen() >= e.revision() })
	newer := report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"readyReplicas":3}`))
	newer.Digest = "new"
	if err := b.Report(ctx, "m1", newer); err != nil {
		t.Fatal(err)
	}
	want := map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "new"}}
	e.waitDigests(b, "m1", want)
	startA()
	waitFor(t, "a's queue written or discarded", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.queue.deltas) == 0 && a.queue.conflicts > 0
	})
	e.waitDigests(a, "m1", want)
	if d := e.storedHeld("m1").obs(workKey).Report.GetDigest(); d != "new" {
		t.Errorf("stored report digest %q; want b's %q (a's report was received first, however fast a's clock)", d, "new")
	}
	e.waitDigests(b, "m1", want)
}
