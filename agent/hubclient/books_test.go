package hubclient

import (
	"fmt"
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
		return b.Welcome(&agentv1.Welcome{HubIdentity: id})
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
		return Effects{Delete: b.Evictions(t0.Add(after), grace)}, nil
	}, want}
}

func deleted(key, version string, evicted bool, want ...string) event {
	return event{"deleted " + key, func(b *Books) (Effects, error) {
		forget, send := b.Deleted(Deletion{Work: state.Work{Key: key, Version: version}, Evicted: evicted})
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
		out = append(out, s)
	}
	for _, w := range e.Apply {
		out = append(out, fmt.Sprintf("apply %s@%s", w.Key, w.Version))
	}
	for _, d := range e.Delete {
		out = append(out, fmt.Sprintf("delete %s %s evicted=%t", d.Work.Key, d.Policy, d.Evicted))
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
				deleteWork("a", orph, "delete a DELETION_POLICY_ORPHAN evicted=false"),
				deleted("a", "v1", false, deleted1, "forget a")},
		},
		{
			name: "delete before SyncDone waits for it",
			snap: snapshot(hubA, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubA), deleteWork("a", del),
				syncDone(1, "delete a DELETION_POLICY_DELETE evicted=false")},
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
				deleteWork("a", agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, "delete a DELETION_POLICY_DELETE evicted=false")},
		},
		{
			name: "delete from another hub identity is ignored, even after SyncDone",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB, "hub hub-b"),
				deleteWork("a", del),
				syncDone(0, "persist a@v1 from hub-a orphaned"),
				deleteWork("a", del)},
		},
		{
			name:   "delete of a work not held is acknowledged",
			snap:   snapshot(hubA),
			events: []event{hello(), welcome(hubA), syncDone(0), deleteWork("a", del, deleted1)},
		},
		{
			name: "a new hub claims what it sends; the rest is orphaned, never deleted on its word",
			snap: snapshot(hubA, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB, "hub hub-b"),
				upsert("a", "v1", "persist a@v1 from hub-b", "apply a@v1"),
				syncDone(1, "persist b@v1 from hub-a orphaned"),
				evict(59*time.Minute, time.Hour),
				evict(time.Hour, time.Hour, "delete b DELETION_POLICY_DELETE evicted=true"),
				deleted("b", "v1", true, "forget b")},
		},
		{
			name: "eviction off keeps orphans forever",
			snap: snapshot(hubA, held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB, "hub hub-b"), syncDone(0, "persist b@v1 from hub-a orphaned"),
				evict(1000*time.Hour, 0)},
		},
		{
			name: "an orphan the new hub sends later is claimed and not evicted",
			snap: snapshot(hubA, held("b", "v1", hubA)),
			events: []event{hello(), welcome(hubB, "hub hub-b"), syncDone(0, "persist b@v1 from hub-a orphaned"),
				upsert("b", "v2", "persist b@v2 from hub-b", "apply b@v2"),
				evict(2*time.Hour, time.Hour)},
		},
		{
			name: "an upsert during a deletion keeps the work",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), syncDone(1),
				deleteWork("a", del, "delete a DELETION_POLICY_DELETE evicted=false"),
				upsert("a", "v2", "persist a@v2 from hub-a", "apply a@v2"),
				deleted("a", "v1", false)},
		},
		{
			name: "the old hub coming back may delete its own works, orphaned meanwhile",
			snap: snapshot(hubA, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubB, "hub hub-b"), syncDone(0, "persist a@v1 from hub-a orphaned"), endStream(),
				hello(), welcome(hubA, "hub hub-a"), syncDone(0),
				deleteWork("a", del, "delete a DELETION_POLICY_DELETE evicted=false")},
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
