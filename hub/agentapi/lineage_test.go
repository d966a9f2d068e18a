package agentapi_test

import (
	"strings"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
)

// TestLaggingReplicaWaitsForTheAgentsRevision: a replica whose works lag
// the store revision an agent has seen computes no difference for it: it
// waits, and past CatchUpTimeout ends the stream with Goodbye SHUTDOWN (the
// agent tries another replica), never a SyncDone from the older view.
// Once caught up it welcomes the agent with the revision it serves.
func TestLaggingReplicaWaitsForTheAgentsRevision(t *testing.T) {
	h := startHub(t, agentapi.Config{CatchUpTimeout: 300 * time.Millisecond})
	h.works.Applied(5)
	hello := &agentv1.Hello{AgentVersion: "test", LastHubIdentity: hubIdentity, LastStoreRevision: 10}
	a := h.connect(t, "edge-1", hello)
	msg := a.recv()
	if msg.GetGoodbye().GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN ||
		!strings.Contains(msg.GetGoodbye().GetMessage(), "behind revision 10") || msg.GetGoodbye().GetRetryAfter() == nil {
		t.Fatalf("first message to an agent ahead of the replica = %v; want Goodbye SHUTDOWN naming the revision, with retry_after", msg)
	}
	go func() { time.Sleep(100 * time.Millisecond); h.works.Applied(12) }()
	b := h.connect(t, "edge-1", hello)
	w := b.recv().GetWelcome()
	if w == nil || w.GetStoreRevision() != 12 {
		t.Fatalf("Welcome once caught up = %v; want one with store revision 12", w)
	}
	b.expect("syncdone 0")
}
