package hubclient

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// welcomeFrom is a Welcome of hub id on a store at epoch and revision rev,
// with the adoption ad (nil for none).
func welcomeFrom(id, epoch string, rev int64, ad *agentv1.Adoption, want ...string) event {
	return event{"welcome " + id, func(b *Books) (Effects, error) {
		return b.Welcome(&agentv1.Welcome{HubIdentity: id, StoreEpoch: epoch, StoreRevision: rev, Adoption: ad}, t0)
	}, want}
}

// upsertAt is an upsert rendered at store revision rev.
func upsertAt(key, version string, rev int64, want ...string) event {
	return event{"upsert " + key, func(b *Books) (Effects, error) {
		return b.Upsert(&agentv1.WorkUpsert{WorkKey: key, Version: version, StoreRevision: rev})
	}, want}
}

// wantLineage checks what the books recorded of the hub's store.
func wantLineage(check func(l state.Lineage) string) event {
	return event{"lineage", func(b *Books) (Effects, error) {
		if msg := check(b.Lineage()); msg != "" {
			return Effects{Notes: []string{"forget LINEAGE: " + msg}}, nil // shows in the diff
		}
		return Effects{}, nil
	}, nil}
}

func lineageSnap(hub string, l state.Lineage, works ...state.Held) state.Snapshot {
	s := snapshot(hub, works...)
	s.Lineage = l
	return s
}

func adoption(id string, deleteUnknown bool, identities ...string) *agentv1.Adoption {
	return &agentv1.Adoption{Id: id, Identities: identities, DeleteUnknown: deleteUnknown}
}

const refusedA = "ack a@v0 APPLY_RESULT_FAILED"

// TestBooksLineage: the agent holds a hub not authoritative for it when the
// hub's store is behind the revision it saw (a restored store), or is
// another store or identity; then nothing is deleted, orphaned, evicted or
// changed, until an adoption that names the identity its works came from.
func TestBooksLineage(t *testing.T) {
	seen := state.Lineage{Epoch: "e1", Revision: 100}
	runScenarios(t, []struct {
		name   string
		snap   state.Snapshot
		events []event
	}{
		{
			name: "a store behind the revision seen deletes, orphans, evicts and downgrades nothing",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, nil),
				upsertAt("a", "v0", 50, refusedA),
				upsertAt("b", "v1", 50, "persist b@v1 from hub-a", "apply b@v1"),
				upsertAt("new", "v1", 61, "persist new@v1 from hub-a", "apply new@v1"),
				deleteWork("b", del),
				syncKeys([]string{"new"}),
				evict(1000*time.Hour, time.Hour),
				wantLineage(func(l state.Lineage) string {
					if !l.Behind || !strings.Contains(l.Distrust, "behind revision 100") || l.Revision != 100 {
						return "want behind revision 100, distrusted, the revision not lowered nor raised"
					}
					return ""
				})},
		},
		{
			name: "distrust of a store behind holds once the store passes the revision again",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, nil), syncKeys(nil), endStream(),
				hello(), welcomeFrom(hubA, "e1", 500, nil), upsertAt("a", "v0", 400, refusedA), syncKeys(nil),
				evict(1000*time.Hour, time.Hour)},
		},
		{
			name: "an adoption naming the identity ends it: works the hub sends are claimed, the others kept unmanaged",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, nil), syncKeys(nil), endStream(),
				hello(), welcomeFrom(hubA, "e1", 70, adoption("ad1", false, hubA)),
				upsertAt("a", "v0", 70, "persist a@v0 from hub-a", "apply a@v0"),
				syncKeys([]string{"a"}, "persist b@v1 from hub-a unmanaged"),
				evict(1000*time.Hour, time.Hour), endStream(),
				hello(), welcomeFrom(hubA, "e1", 80, adoption("ad1", false, hubA)),
				syncKeys([]string{"a"}), deleteWork("b", del),
				upsertAt("b", "v2", 90, "persist b@v2 from hub-a", "apply b@v2"), // claimed again
				wantLineage(func(l state.Lineage) string {
					if l.Distrusted() || l.Adopting || l.Adoption != "ad1" || l.Revision != 90 {
						return "want trusted, adoption ad1 settled, revision 90"
					}
					return ""
				})},
		},
		{
			name: "an adoption that says so deletes what the hub does not have",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, adoption("ad1", true, hubA)),
				syncKeys([]string{"a"}, "persist b@v1 from hub-a removal", "delete b DELETION_POLICY_DELETE evicted=false not_in_hub_set")},
		},
		{
			name: "an adoption this agent saw before does not end it (a store restored to after it)",
			snap: lineageSnap(hubA, state.Lineage{Epoch: "e1", Revision: 100, Adoption: "ad1"}, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, adoption("ad1", true, hubA)),
				syncKeys(nil), upsertAt("a", "v0", 60, refusedA)},
		},
		{
			name:   "an adoption of another identity does not end it",
			snap:   lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 60, adoption("ad1", true, hubB)), syncKeys(nil)},
		},
		{
			name: "another identity is held not authoritative until it adopts this one; the old hub back is trusted",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubB, "e2", 5, nil),
				upsertAt("a", "v0", 5, refusedA), syncKeys(nil), deleteWork("a", del), evict(1000*time.Hour, time.Hour), endStream(),
				hello(), welcomeFrom(hubA, "e1", 120, nil), syncKeys(nil, "persist a@v1 from hub-a removal", "delete a DELETION_POLICY_DELETE evicted=false not_in_hub_set")},
		},
		{
			name: "another identity that adopts this one takes its works: what it sends is claimed, the rest unmanaged",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA), held("b", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubB, "e2", 5, adoption("ad9", false, hubA, hubB), "hub hub-b"),
				upsertAt("a", "v1", 5, "persist a@v1 from hub-b", "apply a@v1"),
				syncKeys([]string{"a"}, "persist b@v1 from hub-a unmanaged"), endStream(),
				hello(), welcomeFrom(hubB, "e2", 6, nil), syncKeys([]string{"a"})},
		},
		{
			name:   "another store epoch is held not authoritative",
			snap:   lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e2", 500, nil), syncKeys(nil), upsertAt("a", "v0", 500, refusedA)},
		},
		{
			name: "a trusted hub raises the revision seen, and its adoption is remembered as seen",
			snap: lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcomeFrom(hubA, "e1", 150, adoption("ad1", false, hubA)),
				upsertAt("a", "v2", 170, "persist a@v2 from hub-a", "apply a@v2"), syncKeys([]string{"a"}),
				wantLineage(func(l state.Lineage) string {
					if l.Revision != 170 || l.Adoption != "ad1" || l.Distrusted() {
						return "want revision 170, adoption ad1 seen, trusted"
					}
					return ""
				})},
		},
		{
			name:   "a hub that predates lineages is not judged by it",
			snap:   lineageSnap(hubA, seen, held("a", "v1", hubA)),
			events: []event{hello(), welcome(hubA), upsert("a", "v2", "persist a@v2 from hub-a", "apply a@v2"), syncKeys([]string{"a"})},
		},
	})
}

// TestBooksUnmanaged: a work kept unmanaged by an adoption is not applied
// at start, not listed in Hello, and named in the heartbeat's condition.
func TestBooksUnmanaged(t *testing.T) {
	u := held("u", "v1", hubA)
	u.Unmanaged = true
	b := NewBooks(lineageSnap(hubA, state.Lineage{Epoch: "e1", Revision: 9}, held("a", "v1", hubA), u))
	if got := b.Start(); len(got) != 1 || got[0].Key != "a" {
		t.Errorf("Start() = %v; want only a", got)
	}
	h := b.Hello("v1")
	if len(h.GetHeldWorks()) != 1 || h.GetLastStoreEpoch() != "e1" || h.GetLastStoreRevision() != 9 {
		t.Errorf("Hello() = %v; want a alone, epoch e1, revision 9", h)
	}
	conds := b.Conditions(t0)
	if len(conds) != 1 || conds[0].GetType() != ConditionUnmanagedWorks || !strings.Contains(conds[0].GetMessage(), "[u]") {
		t.Errorf("Conditions() = %v; want UnmanagedWorks naming u", conds)
	}
}
