package integration

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestAgentOfPreviousReleaseGetsNoCustomizations: the hub sends a new kind
// of message only to an agent that announced it in Hello
// (docs/compatibility.md). With interpreter customizations stored, an
// agent whose Hello is the previous release's (no customizations fields)
// receives Welcome, its work and SyncDone and no Customizations, which it
// would not know and would end its stream on; an agent that announces
// customizations_supported receives them on the same hub.
func TestAgentOfPreviousReleaseGetsNoCustomizations(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	a.mustApply(ctx, reviseRICYAML)

	current := rawConnect(ctx, t, mintAgent(t, dir, "cluster-b"), h.addr, &agentv1.Hello{AgentVersion: "current", CustomizationsSupported: true})
	if got := current.until(t, func(m *agentv1.HubMessage) bool { return m.GetCustomizations() != nil }); got == nil {
		t.Fatal("an agent announcing customizations_supported got no Customizations")
	}

	previous := rawConnect(ctx, t, mintAgent(t, dir, "cluster-a"), h.addr, &agentv1.Hello{AgentVersion: "previous-release"})
	if err := previous.cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		Conditions:     []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements: servedAPIs,
	}}}); err != nil {
		t.Fatal(err)
	}
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+dividedWebYAML)
	previous.until(t, func(m *agentv1.HubMessage) bool { return m.GetWorkUpsert().GetWorkKey() == keyWeb })
	for _, m := range previous.seen {
		if m.GetCustomizations() != nil {
			t.Errorf("the previous release's agent was sent Customizations (%d bytes), a message it does not know", len(m.String()))
		}
	}
}

// rawStream is an agent stream opened with a Hello of the test's making,
// keeping every message the hub sent.
type rawStream struct {
	cs   agentv1.AgentService_ConnectClient
	seen []*agentv1.HubMessage
}

func rawConnect(ctx context.Context, t *testing.T, ag *testAgent, addr string, hello *agentv1.Hello) *rawStream {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(ag.tls)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	cs, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}}); err != nil {
		t.Fatal(err)
	}
	return &rawStream{cs: cs}
}

// until receives messages, keeping each, until want holds for one (which
// it returns), failing the test after workWait or if the stream ends.
func (s *rawStream) until(t *testing.T, want func(*agentv1.HubMessage) bool) *agentv1.HubMessage {
	t.Helper()
	type result struct {
		m   *agentv1.HubMessage
		err error
	}
	deadline := time.After(workWait)
	for {
		got := make(chan result, 1)
		go func() {
			m, err := s.cs.Recv()
			got <- result{m, err}
		}()
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatalf("stream ended: %v (after %d messages)", r.err, len(s.seen))
			}
			s.seen = append(s.seen, r.m)
			if want(r.m) {
				return r.m
			}
		case <-deadline:
			t.Fatalf("not within %s; got %d messages", workWait, len(s.seen))
		}
	}
}
