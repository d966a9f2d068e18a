package syncstate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func TestHas(t *testing.T) {
	s := New(Input{HubIdentity: hubID, Hello: hello(hubID, "held", "1"), Desired: works("a", "1")})
	drain(s)
	s.Apply(upsert("b", "1"), remove("a"))
	for key, want := range map[string]bool{"a": false, "b": true, "held": false, "never": false} {
		if got := s.Has(key); got != want {
			t.Errorf("Has(%s) = %v; want %v", key, got, want)
		}
	}
}

// TestWorkStateInvariants drives sessions with random changes, acks and
// Next calls and checks, after every step, what the single map of work
// states promises: no dead key, the flags' rules, and counters that match
// the map.
func TestWorkStateInvariants(t *testing.T) {
	keys := []string{"k0", "k1", "k2", "k3"}
	versions := []string{"", "v1", "v2"}
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 0))
		pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
		var held []string
		for range r.IntN(4) {
			held = append(held, pick(keys), pick(versions))
		}
		s := New(Input{HubIdentity: hubID, Hello: hello(hubID, held...), Desired: works("k0", pick(versions)), Gone: gone("k1", "k2")})
		for step := range 100 {
			switch r.IntN(5) {
			case 0:
				s.Apply(upsert(pick(keys), pick(versions)))
			case 1:
				s.Apply(remove(pick(keys)))
			case 2:
				s.AcceptAck(ack(pick(keys), pick(versions), applied))
			case 3:
				s.AcceptAck(ack(pick(keys), "", deleted))
			case 4:
				s.Next()
			}
			if err := checkState(s); err != nil {
				t.Fatalf("seed %d, step %d: %v", seed, step, err)
			}
		}
	}
}

// checkState returns what breaks the rules of s.state, or nil.
func checkState(s *Session) error {
	var desired, pending int
	for key, st := range s.state {
		switch {
		case st.dead():
			return fmt.Errorf("%s: dead state %+v kept", key, st)
		case st.flags&unacked != 0 && st.flags&isHeld == 0:
			return fmt.Errorf("%s: unacked but not held", key)
		case st.flags&deleting != 0 && st.flags&isHeld != 0:
			return fmt.Errorf("%s: deleting and held", key)
		case st.flags&isHeld == 0 && st.held != "":
			return fmt.Errorf("%s: version %q kept while not held", key, st.held)
		}
		d, p := st.counts()
		desired, pending = desired+d, pending+p
	}
	if s.Works() != desired || s.Pending() != pending {
		return fmt.Errorf("Works, Pending = %d, %d; the map says %d, %d", s.Works(), s.Pending(), desired, pending)
	}
	return nil
}

// TestAckKeyNotKept: the map of work states keeps the key of the hub's own
// work, not the ack's copy of it.
func TestAckKeyNotKept(t *testing.T) {
	w := &agentv1.WorkUpsert{WorkKey: "ns/web", Version: "1"}
	s := New(Input{Desired: []*agentv1.WorkUpsert{w}})
	drain(s)
	if !s.AcceptAck(&agentv1.Ack{WorkKey: strings.Clone(w.GetWorkKey()), Version: "1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}) {
		t.Fatal("ack of the version sent refused")
	}
	for k := range s.state {
		if unsafe.StringData(k) != unsafe.StringData(w.GetWorkKey()) {
			t.Error("the map holds the ack's copy of the work key; want the work's own")
		}
	}
}
