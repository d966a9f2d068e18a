package syncstate_test

import (
	"fmt"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// fuzzHubID is the hub identity of the fuzzed sessions.
const fuzzHubID = "hub-1"

// Alphabets the fuzz input picks from: few keys and versions, so that
// sequences collide on the same work often.
var (
	fuzzKeys     = []string{"k0", "k1", "k2", "k3", "k4"}
	fuzzVersions = []string{"v0", "v1", "v2"}
)

// fuzzReader reads small choices from the fuzz input; past its end every
// choice is 0.
type fuzzReader struct{ data []byte }

func (r *fuzzReader) next(n int) int {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return int(b) % n
}

func (r *fuzzReader) key() string     { return fuzzKeys[r.next(len(fuzzKeys))] }
func (r *fuzzReader) version() string { return fuzzVersions[r.next(len(fuzzVersions))] }

// model is what the agent holds, as the messages the session gave say,
// and what the cluster should hold.
type model struct {
	same     bool              // the agent's works came from this hub
	held     map[string]string // the hub's view: key → version
	desired  map[string]string // key → version
	deleting map[string]bool   // deletes sent and not acknowledged
	synced   bool
}

// FuzzSession drives a Session with arbitrary Hellos, desired works,
// removals, changes, acknowledgements and status reports, and checks it
// against a model of the protocol (DESIGN §5): upserts carry the latest
// desired version; deletes go only for keys the agent holds from this hub
// and the hub knows are gone; SyncDone comes exactly once, after the
// initial difference; acks and reports are accepted exactly when current;
// and once drained, the agent holds every desired work at its version.
// Run with: go test -run '^$' -fuzz FuzzSession -fuzztime 5m ./hub/syncstate/
func FuzzSession(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 3, 0, 1, 1, 2, 2, 3, 0, 1, 4, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 5, 0, 0, 1, 1, 2, 2, 3, 3, 4, 0, 2, 1, 2, 3, 1, 0, 0, 1, 2, 4, 1, 1, 5, 2, 2})
	f.Add([]byte("some longer input with many choices in it, of every kind: 0123456789"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		in, m := fuzzInput(r)
		s := syncstate.New(in)
		drain(t, s, m, true)
		for step := 0; len(r.data) > 0 && step < 200; step++ {
			fuzzStep(t, r, s, m)
		}
		drain(t, s, m, false)
		for k, v := range m.desired {
			if m.held[k] != v {
				t.Fatalf("after draining, the agent holds %s at %q; want %q", k, m.held[k], v)
			}
		}
		if s.Works() != len(m.desired) {
			t.Fatalf("Works() = %d; want %d", s.Works(), len(m.desired))
		}
	})
}

// fuzzInput builds a session's input and the model of it.
func fuzzInput(r *fuzzReader) (syncstate.Input, *model) {
	m := &model{held: map[string]string{}, desired: map[string]string{}, deleting: map[string]bool{}}
	hello := &agentv1.Hello{}
	if r.next(2) == 0 {
		hello.LastHubIdentity = fuzzHubID
		m.same = true
	} else if r.next(2) == 0 {
		hello.LastHubIdentity = "hub-2"
	}
	in := syncstate.Input{HubIdentity: fuzzHubID, Hello: hello, Digests: map[string]syncstate.Digest{}}
	for n := r.next(6); n > 0; n-- {
		k, v := r.key(), r.version()
		hello.HeldWorks = append(hello.HeldWorks, &agentv1.HeldWork{WorkKey: k, Version: v})
		if m.same {
			m.held[k] = v // the last of a repeated key wins, as in New
		}
		if r.next(2) == 0 {
			hello.ReportedStatuses = append(hello.ReportedStatuses, &agentv1.ReportedStatus{WorkKey: k, Version: v, StatusDigest: "d"})
		}
		if r.next(3) == 0 {
			in.Digests[k] = syncstate.Digest{Version: v, Digest: "d"}
		}
	}
	seen := map[string]bool{}
	for n := r.next(6); n > 0; n-- {
		k := r.key()
		if seen[k] {
			continue // Desired keys are unique
		}
		seen[k] = true
		v := r.version()
		in.Desired = append(in.Desired, work(k, v))
		m.desired[k] = v
	}
	for _, k := range syncstate.DeleteCandidates(fuzzHubID, hello, in.Desired) {
		if !m.same || m.desired[k] != "" {
			panic(fmt.Sprintf("DeleteCandidates gave %s (same hub %v, desired %q)", k, m.same, m.desired[k]))
		}
		if r.next(2) == 0 {
			in.Gone = append(in.Gone, syncstate.Change{Key: k})
		}
	}
	return in, m
}

// fuzzStep makes one change, ack, report or Next.
func fuzzStep(t *testing.T, r *fuzzReader, s *syncstate.Session, m *model) {
	t.Helper()
	switch r.next(5) {
	case 0:
		k, v := r.key(), r.version()
		s.Apply(syncstate.Change{Key: k, Work: work(k, v)})
		m.desired[k] = v
	case 1:
		k := r.key()
		s.Apply(syncstate.Change{Key: k})
		delete(m.desired, k)
	case 2:
		k, v := r.key(), r.version()
		result := agentv1.ApplyResult_APPLY_RESULT_APPLIED
		if r.next(3) == 0 {
			result = agentv1.ApplyResult_APPLY_RESULT_DELETED
		}
		want := m.held[k] == v && m.desired[k] != ""
		if result == agentv1.ApplyResult_APPLY_RESULT_DELETED {
			want = m.deleting[k]
			delete(m.deleting, k)
		}
		if got := s.AcceptAck(&agentv1.Ack{WorkKey: k, Version: v, Result: result}); got != want {
			t.Fatalf("AcceptAck(%s@%s %s) = %v; want %v (held %q, desired %q)", k, v, result, got, want, m.held[k], m.desired[k])
		}
	case 3:
		k, v := r.key(), r.version()
		want := m.held[k] == v && m.desired[k] != ""
		if got := s.AcceptStatus(&agentv1.StatusReport{WorkKey: k, Version: v}); got != want {
			t.Fatalf("AcceptStatus(%s@%s) = %v; want %v (held %q, desired %q)", k, v, got, want, m.held[k], m.desired[k])
		}
	case 4:
		if msg := s.Next(); msg != nil {
			observe(t, msg, m)
		}
	}
}

// drain takes every message Next has now; initial says the session is new
// and SyncDone must come.
func drain(t *testing.T, s *syncstate.Session, m *model, initial bool) {
	t.Helper()
	for i := 0; ; i++ {
		if i > 3*len(fuzzKeys)+3 {
			t.Fatalf("Next gave more than %d messages in a row", i)
		}
		msg := s.Next()
		if msg == nil {
			break
		}
		observe(t, msg, m)
	}
	if initial && !m.synced {
		t.Fatal("no SyncDone after the initial difference")
	}
}

// observe checks one message of Next against the model and records it.
func observe(t *testing.T, msg *agentv1.HubMessage, m *model) {
	t.Helper()
	switch x := msg.GetMessage().(type) {
	case *agentv1.HubMessage_SyncDone:
		if m.synced {
			t.Fatal("SyncDone twice")
		}
		m.synced = true
	case *agentv1.HubMessage_StatusRequest:
		if !m.synced {
			t.Fatal("StatusRequest before SyncDone")
		}
	case *agentv1.HubMessage_WorkUpsert:
		k, v := x.WorkUpsert.GetWorkKey(), x.WorkUpsert.GetVersion()
		if m.desired[k] != v {
			t.Fatalf("upsert %s@%s; the desired version is %q", k, v, m.desired[k])
		}
		if m.held[k] == v {
			t.Fatalf("upsert %s@%s, which the agent holds", k, v)
		}
		m.held[k] = v
		delete(m.deleting, k)
	case *agentv1.HubMessage_WorkDelete:
		k := x.WorkDelete.GetWorkKey()
		if _, ok := m.held[k]; !ok {
			t.Fatalf("delete %s, which the agent does not hold from this hub", k)
		}
		if m.desired[k] != "" {
			t.Fatalf("delete %s, which the cluster should hold at %s", k, m.desired[k])
		}
		delete(m.held, k)
		m.deleting[k] = true
	default:
		t.Fatalf("unexpected message %v", msg)
	}
}

func work(key, version string) *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{WorkKey: key, Version: version}
}
