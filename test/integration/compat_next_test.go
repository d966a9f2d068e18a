package integration

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// nextReleaseField is the number of the field the simulated next release
// adds to its messages, and of the new AgentMessage case it adds: far
// above every number in use, so that it stays unknown to this hub.
const nextReleaseField = 999

// withNextReleaseField adds a field this hub does not know to m, as a
// newer agent's message would carry it on the wire.
func withNextReleaseField[M proto.Message](m M) M {
	b := protowire.AppendTag(nil, nextReleaseField, protowire.BytesType)
	m.ProtoReflect().SetUnknown(protowire.AppendString(b, "next-release"))
	return m
}

// TestAgentOfNextReleaseWithThisHub: an agent newer than the hub
// (docs/compatibility.md). Fields it added to Hello, Heartbeat and Ack,
// unknown to this hub, are ignored and the messages honoured: its cluster
// turns Ready, it gets its work and its ack is taken. A new kind of
// message sent unprompted (an AgentMessage case this hub does not know),
// which the rules forbid without a flag from the hub, ends the stream
// with INVALID_ARGUMENT naming it, and costs the member nothing:
// reconnecting with the work it holds, the agent gets SyncDone and no
// WorkDelete.
func TestAgentOfNextReleaseWithThisHub(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	ag := mintAgent(t, dir, "cluster-a")
	next := rawConnect(ctx, t, ag, h.addr, withNextReleaseField(&agentv1.Hello{AgentVersion: "next-release", CustomizationsSupported: true}))
	welcome := next.until(t, func(m *agentv1.HubMessage) bool { return m.GetWelcome() != nil }).GetWelcome()
	if err := next.cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: withNextReleaseField(&agentv1.Heartbeat{
		AgentVersion: "next-release", Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements: servedAPIs,
	})}}); err != nil {
		t.Fatal(err)
	}
	waitClusterState(ctx, t, a, "cluster-a", hubv1.ClusterState_CLUSTER_STATE_READY)
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+dividedWebYAML)
	upsert := next.until(t, func(m *agentv1.HubMessage) bool { return m.GetWorkUpsert().GetWorkKey() == keyWeb }).GetWorkUpsert()
	if err := next.cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: withNextReleaseField(&agentv1.Ack{
		WorkKey: keyWeb, Version: upsert.GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED,
	})}}); err != nil {
		t.Fatal(err)
	}

	if err := next.cs.Send(withNextReleaseField(&agentv1.AgentMessage{})); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		var m *agentv1.HubMessage
		if m, err = next.cs.Recv(); err == nil {
			next.seen = append(next.seen, m)
		}
	}
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unknown agent message") {
		t.Fatalf("after a message kind the hub does not know, the stream ended with %v; want INVALID_ARGUMENT naming an unknown agent message", err)
	}
	for _, m := range next.seen {
		if m.GetWorkDelete() != nil {
			t.Errorf("the next release's agent was sent %v", m)
		}
	}

	again := rawConnect(ctx, t, ag, h.addr, withNextReleaseField(&agentv1.Hello{AgentVersion: "next-release", CustomizationsSupported: true,
		LastHubIdentity: welcome.GetHubIdentity(), HeldWorks: []*agentv1.HeldWork{{WorkKey: keyWeb, Version: upsert.GetVersion()}}}))
	again.until(t, func(m *agentv1.HubMessage) bool { return m.GetSyncDone() != nil })
	for _, m := range again.seen {
		if m.GetWorkDelete() != nil || m.GetWorkUpsert() != nil {
			t.Errorf("reconnecting with its work after the protocol error, the agent was sent %v; want neither upsert nor delete", m)
		}
	}
}
