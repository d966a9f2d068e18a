package hubclient

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/testing/protocmp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	hubA = "hub-a"
	hubB = "hub-b"
	del  = agentv1.DeletionPolicy_DELETION_POLICY_DELETE
	orph = agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN
)

func held(key, version, hub string) state.Held {
	return state.Held{Work: state.Work{Key: key, Version: version}, Hub: hub}
}

func snapshot(hub string, works ...state.Held) state.Snapshot {
	s := state.Snapshot{HubIdentity: hub, Works: map[string]state.Held{}, Digests: map[string]state.Digest{}}
	for _, w := range works {
		s.Works[w.Work.Key] = w
	}
	return s
}

func TestHello(t *testing.T) {
	orphaned := held("o", "v1", hubA)
	orphaned.OrphanedSince = t0
	tests := []struct {
		name    string
		snap    state.Snapshot
		digests map[string]state.Digest
		want    *agentv1.Hello
	}{
		{"first start", snapshot(""), nil, &agentv1.Hello{AgentVersion: "v1"}},
		{
			"works and digests of the last hub",
			snapshot(hubA, held("a", "v1", hubA), held("b", "v2", hubA)),
			map[string]state.Digest{"a": {Version: "v1", Digest: "d1"}, "b": {Version: "v1", Digest: "old"}},
			&agentv1.Hello{
				AgentVersion: "v1", LastHubIdentity: hubA,
				HeldWorks:        []*agentv1.HeldWork{{WorkKey: "a", Version: "v1"}, {WorkKey: "b", Version: "v2"}},
				ReportedStatuses: []*agentv1.ReportedStatus{{WorkKey: "a", Version: "v1", StatusDigest: "d1"}},
			},
		},
		{
			"works of another hub and orphans are not listed",
			snapshot(hubB, held("a", "v1", hubA), held("b", "v1", hubB), orphaned),
			nil,
			&agentv1.Hello{AgentVersion: "v1", LastHubIdentity: hubB, HeldWorks: []*agentv1.HeldWork{{WorkKey: "b", Version: "v1"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.snap.Digests = tt.digests
			got := NewBooks(tt.snap).Hello("v1")
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("Hello() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// event is one step of a Books scenario.
type event struct {
	name string
	do   func(b *Books) (Effects, error)
	want []string // summarize of the effects
}

func hello() event {
	return event{"hello", func(b *Books) (Effects, error) { b.Hello("v1"); return Effects{}, nil }, nil}
}

func welcome(id string, want ...string) event {
	return event{"welcome " + id, func(b *Books) (Effects, error) {
		return b.Welcome(&agentv1.Welcome{HubIdentity: id}, t0)
	}, want}
}

func upsert(key, version string, want ...string) event {
	return event{"upsert " + key, func(b *Books) (Effects, error) {
		return b.Upsert(&agentv1.WorkUpsert{WorkKey: key, Version: version})
	}, want}
}

func deleteWork(key string, policy agentv1.DeletionPolicy, want ...string) event {
	return event{"delete " + key, func(b *Books) (Effects, error) {
		return b.Delete(&agentv1.WorkDelete{WorkKey: key, DeletionPolicy: policy})
	}, want}
}

// syncKeys is an authoritative SyncDone listing keys.
func syncKeys(keys []string, want ...string) event {
	return event{"sync done with keys", func(b *Books) (Effects, error) {
		return b.SyncDone(&agentv1.SyncDone{WorkCount: int32(len(keys)), WorkKeys: keys, Authoritative: true}, t0)
	}, want}
}

func deleteFor(key string, reason agentv1.DeleteReason, want ...string) event {
	return event{"delete " + key + " for " + reason.String(), func(b *Books) (Effects, error) {
		return b.Delete(&agentv1.WorkDelete{WorkKey: key, DeletionPolicy: del, Reason: reason})
	}, want}
}

// restart replaces b's state with what a new process would load: the
// works as persisted (the test persists every Persist of the steps).
func restart() event {
	return event{"restart", func(b *Books) (Effects, error) {
		works := map[string]state.Held{}
		for k, h := range b.works {
			works[k] = h
		}
		*b = *NewBooks(state.Snapshot{HubIdentity: b.hub, Works: works, Digests: map[string]state.Digest{}})
		var e Effects
		for _, w := range b.Start() {
			e.Apply = append(e.Apply, w)
		}
		e.Delete = b.Resume()
		return e, nil
	}, nil}
}

func syncDone(n int, want ...string) event {
	return event{"sync done", func(b *Books) (Effects, error) {
		return b.SyncDone(&agentv1.SyncDone{WorkCount: int32(n)}, t0)
	}, want}
}

func endStream() event {
	return event{"end stream", func(b *Books) (Effects, error) { b.EndStream(); return Effects{}, nil }, nil}
}

func evict(after, grace time.Duration, want ...string) event {
	return event{"evict", func(b *Books) (Effects, error) {
		return b.Evictions(t0.Add(after), grace), nil
	}, want}
}

func deleted(key, version string, evicted bool, want ...string) event {
	return event{"deleted " + key, func(b *Books) (Effects, error) {
		forget, send := b.Deleted(Deletion{Work: state.Work{Key: key, Version: version}, Removal: state.Removal{Evicted: evicted}})
		e := Effects{Send: send}
		if forget {
			e.Notes = []string{"forget " + key}
		}
		return e, nil
	}, want}
}

// summarize lists effects as short strings; notes are left out except
// "forget".
func summarize(e Effects) []string {
	var out []string
	if e.Hub != "" {
		out = append(out, "hub "+e.Hub)
	}
	for _, h := range e.Persist {
		s := fmt.Sprintf("persist %s@%s from %s", h.Work.Key, h.Work.Version, h.Hub)
		if h.Orphaned() {
			s += " orphaned"
		}
		if h.Unmanaged {
			s += " unmanaged"
		}
		if h.Removal != nil {
			s += " removal"
		}
		out = append(out, s)
	}
	for _, w := range e.Apply {
		out = append(out, fmt.Sprintf("apply %s@%s", w.Key, w.Version))
	}
	for _, d := range e.Delete {
		out = append(out, fmt.Sprintf("delete %s %s evicted=%t %s", d.Work.Key, d.Policy, d.Evicted,
			strings.ToLower(strings.TrimPrefix(d.Reason.String(), "DELETE_REASON_"))))
	}
	for _, m := range e.Send {
		a := m.GetAck()
		out = append(out, fmt.Sprintf("ack %s@%s %s", a.GetWorkKey(), a.GetVersion(), a.GetResult()))
	}
	for _, n := range e.Notes {
		if len(n) > 7 && n[:7] == "forget " {
			out = append(out, n)
		}
	}
	return out
}

func TestBooksDeletionRules(t *testing.T) {
	const deleted1 = "ack a@ APPLY_RESULT_DELETED"
	tests := []struct {
		name   string
		snap   state.Snapshot
		events []event
	}{
		{
			name: "delete after SyncDone from the same hub is carried out and acknowledged",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(1),
				deleteWork("a", orph, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_ORPHAN evicted=false placement_changed"),
				deleted("a", "v1", false, deleted1, "forget a")},
		},
		{
			name: "delete before SyncDone waits for it",
			snap: snapshot(hubA, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubA), deleteWork("a", del),
				syncDone(1, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false placement_changed")},
		},
		{
			name: "delete before SyncDone is dropped when the stream ends first",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), deleteWork("a", del), endStream(),
				hello(), welcome(hubA), syncDone(1)},
		},
		{
			name: "unset policy takes the work's",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(0),
				deleteWork("a", agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false placement_changed")},
		},
		{
			name: "delete from another hub identity is ignored, even after SyncDone",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB),
				deleteWork("a", del),
				syncKeys(nil),
				deleteWork("a", del)},
		},
		{
			name:   "delete of a work not held is acknowledged",
			snap:   snapshot(hubA),
			events: []event{hello(), welcome(hubA), syncDone(0), deleteWork("a", del, deleted1)},
		},
		{
			// Works held from an earlier identity than the agent's (a state
			// from before adoptions: the agent then took a new identity at
			// once).
			name: "works of an earlier hub identity are claimed when sent; the rest is orphaned, never deleted on the new hub's word",
			snap: snapshot(hubB, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB),
				upsert("a", "v1", "persist a@v1 from hub-b", "apply a@v1"),
				syncKeys([]string{"a"}, "persist b@v1 from hub-a orphaned"),
				evict(59*time.Minute, time.Hour),
				evict(time.Hour, time.Hour, "persist b@v1 from hub-a orphaned removal", "delete b DELETION_POLICY_DELETE evicted=true orphan_expired"),
				deleted("b", "v1", true, "forget b")},
		},
		{
			name: "eviction off keeps orphans forever",
			snap: snapshot(hubB, held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB), syncKeys(nil, "persist b@v1 from hub-a orphaned"),
				evict(1000*time.Hour, 0)},
		},
		{
			// A hub whose store was wiped has a new identity and is not
			// authoritative until an operator accepts the store.
			name: "a new hub that is not authoritative orphans nothing and evicts nothing",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB), syncDone(0),
				evict(1000*time.Hour, time.Hour)},
		},
		{
			name: "an orphan is not evicted while the connected hub is not authoritative",
			snap: snapshot(hubB, held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB), syncKeys(nil, "persist b@v1 from hub-a orphaned"), endStream(),
				hello(), welcome(hubB), syncDone(0),
				evict(2*time.Hour, time.Hour)},
		},
		{
			name: "an orphan the new hub sends later is claimed and not evicted",
			snap: snapshot(hubB, held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB), syncKeys(nil, "persist b@v1 from hub-a orphaned"),
				upsert("b", "v2", "persist b@v2 from hub-b", "apply b@v2"),
				evict(2*time.Hour, time.Hour)},
		},
		{
			name: "an upsert during a deletion keeps the work",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(1),
				deleteWork("a", del, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false placement_changed"),
				upsert("a", "v2", "persist a@v2 from hub-a", "apply a@v2"),
				deleted("a", "v1", false)},
		},
		{
			name: "the old hub coming back may delete its own works, untouched meanwhile",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB), syncKeys(nil), endStream(),
				hello(), welcome(hubA), syncDone(0),
				deleteWork("a", del, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false placement_changed")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBooks(tt.snap)
			for i, ev := range tt.events {
				e, err := ev.do(b)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, ev.name, err)
				}
				if diff := cmp.Diff(ev.want, summarize(e)); diff != "" {
					t.Errorf("step %d (%s): effects mismatch (-want +got):\n%s", i, ev.name, diff)
				}
			}
		})
	}
}

func TestBooksProtocolErrors(t *testing.T) {
	tests := []struct {
		name   string
		events []event
	}{
		{"upsert before Welcome", []event{hello(), upsert("a", "v1")}},
		{"delete before Welcome", []event{hello(), deleteWork("a", del)}},
		{"SyncDone before Welcome", []event{hello(), syncDone(0)}},
		{"Welcome without an identity", []event{hello(), welcome("")}},
		{"two Welcomes", []event{hello(), welcome(hubA), welcome(hubA)}},
		{"two SyncDones", []event{hello(), welcome(hubA), syncDone(0), syncDone(0)}},
		{"upsert without a version", []event{hello(), welcome(hubA), upsert("a", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBooks(snapshot(""))
			var err error
			for _, ev := range tt.events {
				if _, err = ev.do(b); err != nil {
					break
				}
			}
			if err == nil {
				t.Fatalf("%s: no error; want ErrProtocol", tt.name)
			}
		})
	}
}

// TestBooksHubKeySet: an authoritative SyncDone deletes the works held
// from the same hub that its key set lacks (removed while the agent was
// away, however long ago), and nothing else.
func TestBooksHubKeySet(t *testing.T) {
	tests := []struct {
		name   string
		snap   state.Snapshot
		events []event
	}{
		{
			name: "a work the hub no longer has is deleted at SyncDone",
			snap: snapshot(hubA, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubA),
				syncKeys([]string{"b"}, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false not_in_hub_set"),
				deleted("a", "v1", false, "ack a@ APPLY_RESULT_DELETED", "forget a")},
		},
		{
			name: "the work's own deletion policy is kept",
			snap: snapshot(hubA, state.Held{Work: state.Work{Key: "a", Version: "v1",
				Options: &agentv1.ApplyOptions{DeletionPolicy: orph}}, Hub: hubA}),
			events: []event{hello(), welcome(hubA),
				syncKeys(nil, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_ORPHAN evicted=false not_in_hub_set")},
		},
		{
			name: "a work sent on the stream before SyncDone is kept though the set lacks it",
			snap: snapshot(hubA),
			events: []event{hello(), welcome(hubA),
				upsert("new", "v1", "persist new@v1 from hub-a", "apply new@v1"),
				syncKeys(nil)},
		},
		{
			name: "a work of an earlier hub that Hello did not list (orphaned) is left to the grace period",
			snap: snapshot(hubB, state.Held{Work: state.Work{Key: "a", Version: "v1"}, Hub: hubA, OrphanedSince: t0}),
			events: []event{hello(), welcome(hubB), syncKeys(nil),
				evict(time.Hour, time.Hour, "persist a@v1 from hub-a orphaned removal", "delete a DELETION_POLICY_DELETE evicted=true orphan_expired")},
		},
		{
			name:   "a hub that is not authoritative deletes nothing",
			snap:   snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(0)},
		},
		{
			name: "another hub identity's set never deletes nor orphans",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB),
				syncKeys([]string{"x"}), evict(1000*time.Hour, time.Hour)},
		},
		{
			name: "an explicit delete before SyncDone keeps its reason",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA),
				deleteFor("a", agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED),
				syncKeys(nil, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false template_deleted")},
		},
	}
	runScenarios(t, tests)
}

// TestBooksPendingDeletionSurvivesRestart: a decided deletion is recorded
// before it starts; after a restart it is resumed, not applied again, and
// not listed in Hello (so the hub does not think the work held).
func TestBooksPendingDeletionSurvivesRestart(t *testing.T) {
	tests := []struct {
		name   string
		snap   state.Snapshot
		events []event
	}{
		{
			name: "a hub's delete",
			snap: snapshot(hubA, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(2),
				deleteFor("a", agentv1.DeleteReason_DELETE_REASON_FAILOVER, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false failover"),
				restart(),
				hello(), welcome(hubA), syncDone(1),
				deleted("a", "v1", false, "ack a@ APPLY_RESULT_DELETED", "forget a")},
		},
		{
			name: "an upsert after the restart cancels it",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(1),
				deleteWork("a", del, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false placement_changed"),
				restart(), hello(), welcome(hubA),
				upsert("a", "v2", "persist a@v2 from hub-a", "apply a@v2"),
				deleted("a", "v1", false)},
		},
	}
	runScenarios(t, tests)
	// What restart returns: the resumed deletion, no apply of a.
	b := NewBooks(snapshot(hubA, held("b", "v1", hubA), state.Held{Work: state.Work{Key: "a", Version: "v1"}, Hub: hubA,
		Removal: &state.Removal{Policy: del, Reason: agentv1.DeleteReason_DELETE_REASON_FAILOVER, Hub: hubA}}))
	var got []string
	for _, w := range b.Start() {
		got = append(got, "apply "+w.Key)
	}
	for _, d := range b.Resume() {
		got = append(got, "resume "+d.Work.Key+" "+d.Reason.String())
	}
	if want := []string{"apply b", "resume a DELETE_REASON_FAILOVER"}; !cmp.Equal(want, got) {
		t.Errorf("Start and Resume after a restart = %v; want %v", got, want)
	}
	if h := b.Hello("v1"); len(h.GetHeldWorks()) != 1 || h.GetHeldWorks()[0].GetWorkKey() != "b" {
		t.Errorf("Hello with a pending deletion of a = %v; want only b held", h)
	}
}

// TestBooksUndecide: a deletion whose record could not be written does
// not start, and is decided again on the hub's next word.
func TestBooksUndecide(t *testing.T) {
	b := NewBooks(snapshot(hubA, held("a", "v1", hubA)))
	b.Hello("v1")
	mustEffects(t)(b.Welcome(&agentv1.Welcome{HubIdentity: hubA}, t0))
	mustEffects(t)(b.SyncDone(&agentv1.SyncDone{}, t0))
	e := mustEffects(t)(b.Delete(&agentv1.WorkDelete{WorkKey: "a"}))
	if len(e.Delete) != 1 {
		t.Fatalf("Delete() = %v; want one deletion", summarize(e))
	}
	b.Undecide("a")
	if h, _ := b.Held("a"); h.Removal != nil {
		t.Errorf("Held(a) after Undecide = %+v; want no removal", h)
	}
	if e := mustEffects(t)(b.Delete(&agentv1.WorkDelete{WorkKey: "a"})); len(e.Delete) != 1 {
		t.Errorf("Delete() after Undecide = %v; want the deletion decided again", summarize(e))
	}
}

func mustEffects(t *testing.T) func(Effects, error) Effects {
	return func(e Effects, err error) Effects {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}

func runScenarios(t *testing.T, tests []struct {
	name   string
	snap   state.Snapshot
	events []event
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBooks(tt.snap)
			for i, ev := range tt.events {
				e, err := ev.do(b)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, ev.name, err)
				}
				if ev.want == nil && ev.name == "restart" {
					continue
				}
				if diff := cmp.Diff(ev.want, summarize(e)); diff != "" {
					t.Errorf("step %d (%s): effects mismatch (-want +got):\n%s", i, ev.name, diff)
				}
			}
		})
	}
}

// TestBooksHubDeleteOfAnEvictionUnderWay: the hub's WorkDelete of a work
// whose eviction is under way is acknowledged once the deletion is done.
func TestBooksHubDeleteOfAnEvictionUnderWay(t *testing.T) {
	runScenarios(t, []struct {
		name   string
		snap   state.Snapshot
		events []event
	}{{
		name: "eviction, then the hub's delete",
		snap: snapshot(hubA, state.Held{Work: state.Work{Key: "a", Version: "v1"}, Hub: hubA, OrphanedSince: t0}),
		events: []event{
			evict(time.Hour, time.Hour, "persist a@v1 from hub-a orphaned removal", "delete a DELETION_POLICY_DELETE evicted=true orphan_expired"),
			hello(), welcome(hubA), syncDone(0), deleteWork("a", del),
			deleted("a", "v1", true, "ack a@ APPLY_RESULT_DELETED", "forget a"),
		},
	}})
}
