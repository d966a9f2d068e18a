package agentapi_test

import (
	"slices"
	"testing"

	"github.com/tetherproj/tether/hub/agentapi"
)

// TestTooManyWorksWithholdTheExcessAndKeepTheStream: a cluster over
// max_works keeps its stream and its lease; the works over the limit are
// neither sent nor deleted until room is made.
func TestTooManyWorksWithholdTheExcessAndKeepTheStream(t *testing.T) {
	h := startHub(t, agentapi.Config{MaxWorks: 3})
	many := []string{"edge-many"}
	h.works.Set(many, work("a", "1"), work("b", "1"), work("c", "1"), work("d", "1"))

	// The agent holds d: it is served first, then a and b; c is withheld.
	a := h.connect(t, "edge-many", held(hubIdentity, "d", "1"))
	a.expect("welcome "+hubIdentity, "upsert a@1", "upsert b@1")
	a.expectKeySet(3, "a", "b", "d")
	a.send(heartbeat())
	waitLease(t, h, "edge-many", "Ready")

	h.works.Set(many, work("e", "1")) // over the limit: withheld too
	h.works.Remove("edge-many", "a")  // room for one: c, first by key
	a.expect("delete a DELETION_POLICY_DELETE", "upsert c@1")
	h.works.Set(many, work("e", "2"))
	h.works.Remove("edge-many", "b")
	a.expect("delete b DELETION_POLICY_DELETE", "upsert e@2")
	h.works.Set(many, work("sentinel", "1")) // over the limit again: withheld
	h.works.Set(many, work("c", "2"))        // a served work changes
	a.expect("upsert c@2")
}

// TestAgentHoldingMoreThanTheLimitLosesNothing: an agent that holds more
// works than the limit (the limit was lowered) keeps them all: the excess
// is withheld, not deleted, and stays in SyncDone's key set (an agent
// deletes what an authoritative key set lacks).
func TestAgentHoldingMoreThanTheLimitLosesNothing(t *testing.T) {
	h := startHub(t, agentapi.Config{MaxWorks: 2})
	h.works.Set(edge1, work("a", "1"), work("b", "1"), work("c", "2"), work("d", "1"))
	a := h.connect(t, "edge-1", held(hubIdentity, "a", "1", "b", "1", "c", "1", "d", "1"))
	a.expect("welcome " + hubIdentity) // c@2 and d withheld: no upsert, no delete
	a.expectKeySet(2, "a", "b", "c", "d")
	h.works.Remove("edge-1", "a")
	a.expect("delete a DELETION_POLICY_DELETE", "upsert c@2")
}

// expectKeySet receives SyncDone and checks that it is authoritative with
// count works served and exactly keys in its key set: the keys the agent
// keeps, not only how many.
func (a *agent) expectKeySet(count int32, keys ...string) {
	a.t.Helper()
	m := a.recv()
	sd := m.GetSyncDone()
	if sd == nil {
		a.t.Fatalf("received %s; want SyncDone", describe(m))
	}
	if !sd.GetAuthoritative() || sd.GetWorkCount() != count || !slices.Equal(sd.GetWorkKeys(), keys) {
		a.t.Errorf("SyncDone = authoritative %t, %d works, keys %v; want authoritative, %d works, keys %v",
			sd.GetAuthoritative(), sd.GetWorkCount(), sd.GetWorkKeys(), count, keys)
	}
}
