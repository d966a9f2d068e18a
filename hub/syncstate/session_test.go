package syncstate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const hubID = "hub-1"

func work(key, version string) *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{WorkKey: key, Version: version}
}

func works(kv ...string) []*agentv1.WorkUpsert {
	var out []*agentv1.WorkUpsert
	for i := 0; i < len(kv); i += 2 {
		out = append(out, work(kv[i], kv[i+1]))
	}
	return out
}

func hello(identity string, kv ...string) *agentv1.Hello {
	h := &agentv1.Hello{LastHubIdentity: identity}
	for i := 0; i < len(kv); i += 2 {
		h.HeldWorks = append(h.HeldWorks, &agentv1.HeldWork{WorkKey: kv[i], Version: kv[i+1]})
	}
	return h
}

func gone(keys ...string) []Change {
	var out []Change
	for _, k := range keys {
		out = append(out, Change{Key: k, Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE})
	}
	return out
}

// describe renders a message as one short line, for diffs.
func describe(m *agentv1.HubMessage) string {
	switch m := m.GetMessage().(type) {
	case *agentv1.HubMessage_WorkUpsert:
		return "upsert " + m.WorkUpsert.GetWorkKey() + "@" + m.WorkUpsert.GetVersion()
	case *agentv1.HubMessage_WorkDelete:
		return "delete " + m.WorkDelete.GetWorkKey()
	case *agentv1.HubMessage_SyncDone:
		return fmt.Sprintf("syncdone %d", m.SyncDone.GetWorkCount())
	case *agentv1.HubMessage_StatusRequest:
		return "status " + strings.Join(m.StatusRequest.GetWorkKeys(), ",")
	}
	return fmt.Sprintf("unexpected %T", m.GetMessage())
}

func drain(s *Session) []string {
	var out []string
	for m := s.Next(); m != nil; m = s.Next() {
		out = append(out, describe(m))
	}
	return out
}

func TestInitialDifference(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{
			name: "empty hello gets every work then SyncDone",
			in:   Input{HubIdentity: hubID, Hello: &agentv1.Hello{}, Desired: works("b", "1", "a", "1")},
			want: []string{"upsert a@1", "upsert b@1", "syncdone 2"},
		},
		{
			name: "nil hello and no works is just SyncDone",
			in:   Input{HubIdentity: hubID},
			want: []string{"syncdone 0"},
		},
		{
			name: "same hub: only stale and missing works, deletes for known-gone keys",
			in: Input{
				HubIdentity: hubID,
				Hello:       hello(hubID, "cur", "1", "stale", "1", "gone", "1", "unknown", "1"),
				Desired:     works("cur", "1", "stale", "2", "new", "1"),
				Gone:        gone("gone"),
			},
			want: []string{"upsert new@1", "upsert stale@2", "delete gone", "syncdone 3"},
		},
		{
			name: "another hub identity: everything again, no deletes",
			in: Input{
				HubIdentity: hubID,
				Hello:       hello("hub-0", "cur", "1", "gone", "1"),
				Desired:     works("cur", "1"),
				Gone:        gone("gone"),
			},
			want: []string{"upsert cur@1", "syncdone 1"},
		},
		{
			name: "first start without identity deletes nothing",
			in:   Input{HubIdentity: hubID, Hello: hello("", "gone", "1"), Gone: gone("gone")},
			want: []string{"syncdone 0"},
		},
		{
			name: "gone is ignored for keys the agent does not hold or the hub wants",
			in: Input{
				HubIdentity: hubID,
				Hello:       hello(hubID, "a", "1"),
				Desired:     works("a", "1"),
				Gone:        gone("a", "never-held"),
			},
			want: []string{"syncdone 1"},
		},
		{
			name: "status request for current works whose digest the hub lacks",
			in: Input{
				HubIdentity: hubID,
				Hello: &agentv1.Hello{
					LastHubIdentity: hubID,
					HeldWorks:       hello(hubID, "a", "1", "b", "1", "c", "1", "d", "1").HeldWorks,
					ReportedStatuses: []*agentv1.ReportedStatus{
						{WorkKey: "a", Version: "1", StatusDigest: "x"}, // hub has it
						{WorkKey: "b", Version: "1", StatusDigest: "y"}, // hub has another digest
						{WorkKey: "c", Version: "1", StatusDigest: "z"}, // hub has none
						{WorkKey: "d", Version: "1", StatusDigest: "w"}, // stale: d is re-sent
					},
				},
				Desired: works("a", "1", "b", "1", "c", "1", "d", "2"),
				Digests: map[string]Digest{"a": {"1", "x"}, "b": {"1", "old"}},
			},
			want: []string{"upsert d@2", "syncdone 4", "status b,c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := drain(New(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteCandidates(t *testing.T) {
	tests := []struct {
		name  string
		hello *agentv1.Hello
		want  []string
	}{
		{"same hub", hello(hubID, "a", "1", "z", "1", "y", "1"), []string{"y", "z"}},
		{"another hub", hello("hub-0", "z", "1"), nil},
		{"no identity", hello("", "z", "1"), nil},
		{"nothing extra", hello(hubID, "a", "7"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeleteCandidates(hubID, tt.hello, works("a", "1"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DeleteCandidates (-want +got):\n%s", diff)
			}
		})
	}
}

func upsert(key, version string) Change { return Change{Key: key, Work: work(key, version)} }
func remove(key string) Change          { return Change{Key: key} }

func TestApplyCoalesces(t *testing.T) {
	tests := []struct {
		name    string
		held    *agentv1.Hello
		desired []*agentv1.WorkUpsert
		before  []Change // applied before the initial difference is drained
		after   []Change // applied after
		want    []string // everything Next returns
	}{
		{
			name:    "change during initial sync replaces the queued upsert before SyncDone",
			desired: works("a", "1", "b", "1"),
			before:  []Change{upsert("a", "2"), upsert("a", "3"), upsert("c", "1")},
			want:    []string{"upsert a@3", "upsert b@1", "syncdone 3", "upsert c@1"},
		},
		{
			name:    "many versions after sync: only the latest",
			desired: works("a", "1"),
			after:   []Change{upsert("a", "2"), upsert("b", "1"), upsert("a", "3"), upsert("a", "4")},
			want:    []string{"upsert a@1", "syncdone 1", "upsert a@4", "upsert b@1"},
		},
		{
			name:    "removal of a sent work is a delete",
			desired: works("a", "1"),
			after:   []Change{remove("a")},
			want:    []string{"upsert a@1", "syncdone 1", "delete a"},
		},
		{
			name:   "upsert then removal of a never-sent work sends nothing",
			before: []Change{upsert("x", "1"), remove("x")},
			want:   []string{"syncdone 0"},
		},
		{
			name:    "back to the version the agent holds sends nothing",
			held:    hello(hubID, "a", "1"),
			desired: works("a", "1"),
			after:   []Change{upsert("a", "2"), upsert("a", "1")},
			want:    []string{"syncdone 1"},
		},
		{
			name:    "removal of a key the agent holds from another hub sends nothing",
			held:    hello("hub-0", "old", "1"),
			desired: nil,
			after:   []Change{remove("old")},
			want:    []string{"syncdone 0"},
		},
		{
			name:  "removal of a key held from this hub, unknown at connect, is a delete",
			held:  hello(hubID, "u", "1"),
			after: []Change{remove("u")},
			want:  []string{"syncdone 0", "delete u"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Input{HubIdentity: hubID, Hello: tt.held, Desired: tt.desired})
			s.Apply(tt.before...)
			got := drain(s)
			s.Apply(tt.after...)
			got = append(got, drain(s)...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func ack(key, version string, r agentv1.ApplyResult) *agentv1.Ack {
	return &agentv1.Ack{WorkKey: key, Version: version, Result: r}
}

const (
	applied = agentv1.ApplyResult_APPLY_RESULT_APPLIED
	failed  = agentv1.ApplyResult_APPLY_RESULT_FAILED
	deleted = agentv1.ApplyResult_APPLY_RESULT_DELETED
)

func TestAcceptAckAndStatus(t *testing.T) {
	// a@2 sent (agent held a@1), b@1 held and current, c held and unknown,
	// d sent then removed (delete sent), e@1 sent then e@2 queued, unsent.
	newSession := func() *Session {
		s := New(Input{HubIdentity: hubID, Hello: hello(hubID, "a", "1", "b", "1", "c", "1"), Desired: works("a", "2", "b", "1", "d", "1", "e", "1")})
		drain(s)
		s.Apply(remove("d"))
		drain(s)
		s.Apply(upsert("e", "2"))
		return s
	}
	tests := []struct {
		name       string
		ack        *agentv1.Ack
		status     *agentv1.StatusReport
		want       bool
		wantUnsent int // Pending after
	}{
		{name: "ack of the version sent", ack: ack("a", "2", applied), want: true, wantUnsent: 2},
		{name: "failed ack of the version sent", ack: ack("a", "2", failed), want: true, wantUnsent: 2},
		{name: "ack of an older version", ack: ack("a", "1", applied), want: false, wantUnsent: 3},
		{name: "ack of a held current work", ack: ack("b", "1", applied), want: true, wantUnsent: 3},
		{name: "ack of an unknown work", ack: ack("c", "1", applied), want: false, wantUnsent: 3},
		{name: "ack of the delete sent", ack: ack("d", "", deleted), want: true, wantUnsent: 2},
		{name: "deleted ack without a delete sent", ack: ack("b", "", deleted), want: false, wantUnsent: 3},
		{name: "ack of the last version sent while a newer is queued", ack: ack("e", "1", applied), want: true, wantUnsent: 2},
		{name: "status of the version sent", status: &agentv1.StatusReport{WorkKey: "a", Version: "2"}, want: true, wantUnsent: 3},
		{name: "status of a stale version", status: &agentv1.StatusReport{WorkKey: "a", Version: "1"}, want: false, wantUnsent: 3},
		{name: "status of a deleted work", status: &agentv1.StatusReport{WorkKey: "d", Version: "1"}, want: false, wantUnsent: 3},
		{name: "status of an unknown work", status: &agentv1.StatusReport{WorkKey: "c", Version: "1"}, want: false, wantUnsent: 3},
		{name: "status of a version not yet sent", status: &agentv1.StatusReport{WorkKey: "e", Version: "2"}, want: false, wantUnsent: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession()
			var got bool
			if tt.ack != nil {
				got = s.AcceptAck(tt.ack)
			} else {
				got = s.AcceptStatus(tt.status)
			}
			if got != tt.want {
				t.Errorf("Accept = %v; want %v", got, tt.want)
			}
			if s.Pending() != tt.wantUnsent {
				t.Errorf("Pending = %d; want %d", s.Pending(), tt.wantUnsent)
			}
		})
	}
}

// TestEmptiedMapRenewed: once the cluster has lost every work and the
// agent acknowledged every delete, the session's map of work states is a
// new one, not the emptied map that had room for them all (a map never
// gives its room back). The agent gets 1,000 works, then all are removed.
func TestEmptiedMapRenewed(t *testing.T) {
	var desired []string
	var removals []Change
	for i := range 1000 {
		desired = append(desired, fmt.Sprintf("w%04d", i), "1")
		removals = append(removals, remove(fmt.Sprintf("w%04d", i)))
	}
	s := New(Input{HubIdentity: hubID, Desired: works(desired...)})
	drain(s)
	for i := 0; i < len(desired); i += 2 {
		s.AcceptAck(ack(desired[i], "1", applied))
	}
	s.Apply(removals...)
	drain(s)
	if len(s.state) != 1000 || s.Pending() != 1000 {
		t.Fatalf("%d keys, %d deletes pending; want 1000 each", len(s.state), s.Pending())
	}
	state := reflect.ValueOf(s.state).UnsafePointer()
	for i := 0; i < len(desired); i += 2 {
		s.AcceptAck(ack(desired[i], "", deleted))
	}
	if s.Pending() != 0 || len(s.state) != 0 {
		t.Fatalf("Pending, keys = %d, %d after every ack; want 0, 0", s.Pending(), len(s.state))
	}
	if reflect.ValueOf(s.state).UnsafePointer() == state {
		t.Error("the emptied map of 1,000 work states is kept; want a new one")
	}
}

func TestStatusOfNewVersionAcceptedOnceSent(t *testing.T) {
	s := New(Input{HubIdentity: hubID, Desired: works("a", "1")})
	drain(s)
	s.Apply(upsert("a", "2"))
	r1, r2 := &agentv1.StatusReport{WorkKey: "a", Version: "1"}, &agentv1.StatusReport{WorkKey: "a", Version: "2"}
	if !s.AcceptStatus(r1) || s.AcceptStatus(r2) {
		t.Fatalf("before a@2 is sent: AcceptStatus(a@1), AcceptStatus(a@2) = %v, %v; want true, false", s.AcceptStatus(r1), s.AcceptStatus(r2))
	}
	if got := drain(s); len(got) != 1 || got[0] != "upsert a@2" {
		t.Fatalf("Next after change = %v; want [upsert a@2]", got)
	}
	if s.AcceptStatus(r1) || !s.AcceptStatus(r2) {
		t.Errorf("after a@2 is sent: AcceptStatus(a@1), AcceptStatus(a@2) = %v, %v; want false, true", s.AcceptStatus(r1), s.AcceptStatus(r2))
	}
	if s.Works() != 1 || !s.Synced() || s.Queued() != 0 {
		t.Errorf("Works, Synced, Queued = %d, %v, %d; want 1, true, 0", s.Works(), s.Synced(), s.Queued())
	}
}

// TestSyncDoneCarriesTheKeySet: an authoritative hub lists every work of
// the cluster in SyncDone, so that the agent can delete what it holds and
// the hub removed however long ago; a hub that cannot vouch for its view
// lists nothing and says so.
func TestSyncDoneCarriesTheKeySet(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want *agentv1.SyncDone
	}{
		{
			name: "authoritative: every desired key, sorted",
			in:   Input{HubIdentity: hubID, Hello: hello(hubID, "old", "1"), Desired: works("b", "1", "a", "1")},
			want: &agentv1.SyncDone{WorkCount: 2, WorkKeys: []string{"a", "b"}, Authoritative: true},
		},
		{
			name: "authoritative with no works: an empty set",
			in:   Input{HubIdentity: hubID, Hello: hello(hubID, "old", "1")},
			want: &agentv1.SyncDone{WorkCount: 0, WorkKeys: []string{}, Authoritative: true},
		},
		{
			name: "not authoritative: no set",
			in:   Input{HubIdentity: hubID, Hello: hello(hubID, "old", "1"), Desired: works("a", "1"), NotAuthoritative: true},
			want: &agentv1.SyncDone{WorkCount: 1},
		},
		{
			name: "withheld works the agent holds are in the set, the others not",
			in: Input{HubIdentity: hubID, Hello: hello(hubID, "a", "1", "w1", "1", "w2", "1"),
				Desired: works("a", "1"), Withheld: []string{"w2", "w1", "w3"}},
			want: &agentv1.SyncDone{WorkCount: 1, WorkKeys: []string{"a", "w1", "w2"}, Authoritative: true},
		},
		{
			name: "withheld works of another hub's agent: nothing held from this hub",
			in:   Input{HubIdentity: hubID, Hello: hello("other", "w1", "1"), Desired: works("a", "1"), Withheld: []string{"w1"}},
			want: &agentv1.SyncDone{WorkCount: 1, WorkKeys: []string{"a"}, Authoritative: true},
		},
		{
			name: "withheld and vouched for: listed once",
			in: Input{HubIdentity: hubID, Hello: hello(hubID, "w1", "1"), Withheld: []string{"w1"},
				Gone: []Change{{Key: "w1", Keep: true}}},
			want: &agentv1.SyncDone{WorkCount: 0, WorkKeys: []string{"w1"}, Authoritative: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *agentv1.SyncDone
			s := New(tt.in)
			for m := s.Next(); m != nil; m = s.Next() {
				if sd := m.GetSyncDone(); sd != nil {
					got = sd
				}
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("SyncDone (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeleteCarriesItsReason: the reason of a removal reaches the agent,
// from the initial difference and from a later change.
func TestDeleteCarriesItsReason(t *testing.T) {
	s := New(Input{
		HubIdentity: hubID,
		Hello:       hello(hubID, "a", "1", "b", "1"),
		Desired:     works("b", "1"),
		Gone:        []Change{{Key: "a", Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE, Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED}},
	})
	var got []*agentv1.WorkDelete
	collect := func() {
		for m := s.Next(); m != nil; m = s.Next() {
			if d := m.GetWorkDelete(); d != nil {
				got = append(got, d)
			}
		}
	}
	collect()
	s.Apply(Change{Key: "b", Policy: agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN, Reason: agentv1.DeleteReason_DELETE_REASON_FAILOVER})
	collect()
	want := []*agentv1.WorkDelete{
		{WorkKey: "a", DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE, Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED},
		{WorkKey: "b", DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN, Reason: agentv1.DeleteReason_DELETE_REASON_FAILOVER},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("WorkDeletes (-want +got):\n%s", diff)
	}
}

// TestWithheldHeldWorkGetsNothing: a withheld work the agent holds is
// neither sent nor deleted in the initial difference; served later (room
// made) at the version the agent holds, it is not sent again; removed, it
// is deleted.
func TestWithheldHeldWorkGetsNothing(t *testing.T) {
	s := New(Input{HubIdentity: hubID, Hello: hello(hubID, "a", "1", "w", "1"), Desired: works("a", "1"), Withheld: []string{"w"}})
	if got, want := drain(s), []string{"syncdone 1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("initial difference = %v; want %v", got, want)
	}
	s.Apply(Change{Key: "w", Work: work("w", "1")})
	if m := s.Next(); m != nil {
		t.Errorf("Next() after serving w at the version held = %s; want nothing", describe(m))
	}
	s.Apply(Change{Key: "w"})
	if got, want := drain(s), []string{"delete w"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after w's removal = %v; want %v", got, want)
	}
}

// TestKeepGoesIntoTheKeySet: a held work the hub vouches the cluster keeps
// without sending it is in SyncDone's key set and gets no delete; Apply
// ignores Keep.
func TestKeepGoesIntoTheKeySet(t *testing.T) {
	s := New(Input{
		HubIdentity: hubID,
		Hello:       hello(hubID, "kept", "1", "zombie", "1"),
		Desired:     works("a", "1"),
		Gone:        []Change{{Key: "kept", Keep: true}},
	})
	var sd *agentv1.SyncDone
	for m := s.Next(); m != nil; m = s.Next() {
		if m.GetWorkDelete() != nil {
			t.Errorf("message %s; want no delete", describe(m))
		}
		if m.GetSyncDone() != nil {
			sd = m.GetSyncDone()
		}
	}
	want := &agentv1.SyncDone{WorkCount: 1, WorkKeys: []string{"a", "kept"}, Authoritative: true}
	if diff := cmp.Diff(want, sd, protocmp.Transform()); diff != "" {
		t.Errorf("SyncDone (-want +got):\n%s", diff)
	}
	s.Apply(Change{Key: "a", Keep: true})
	if m := s.Next(); m != nil {
		t.Errorf("Next() after Apply(Keep) = %s; want nothing", describe(m))
	}
}
