package hubclient_test

import (
	"testing"
	"time"

	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// replicas starts a hub replica on each of hosts (127.0.0.x), each serving
// a certificate for its own host only.
func replicas(t *testing.T, certs *hubtest.Certs, hosts ...string) []*hubtest.Hub {
	t.Helper()
	hubs := make([]*hubtest.Hub, len(hosts))
	for i, h := range hosts {
		hubs[i] = hubtest.StartServing(t, certs, h+":0", certs.ServingFor(t, h))
	}
	return hubs
}

func goodbye(reason agentv1.DisconnectReason) *agentv1.HubMessage { return hubtest.Goodbye(reason, 0) }

// TestGoodbyeMovesToAnotherReplica: replica A refuses every stream with
// Goodbye SHUTDOWN (a replica cut off from its store) or REBALANCE, its
// TCP connection healthy; B serves. The agent, given A then B in that
// order, ends up streaming on B after one refusal (two at most).
func TestGoodbyeMovesToAnotherReplica(t *testing.T) {
	for _, reason := range []agentv1.DisconnectReason{
		agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN,
		agentv1.DisconnectReason_DISCONNECT_REASON_REBALANCE,
	} {
		t.Run(reason.String(), func(t *testing.T) {
			certs := hubtest.NewCerts(t)
			hubs := replicas(t, certs, "127.0.0.1", "127.0.0.2")
			hubs[0].Refuse(goodbye(reason))
			startAgent(t, certs, "", t.TempDir(), withoutServerName, withDialOptions(inOrder),
				withAddrs(hubs[0].Addr, hubs[1].Addr))
			s := hubs[1].Next(t)
			s.Send(t, hubtest.Welcome(hubA, beat), hubtest.SyncDone(0))
			s.Recv(t, hubtest.Heartbeats)
			// 1, or 2 if B's handshake took longer than pick_first's 250 ms
			// happy-eyeballs delay and A answered first again.
			if n := hubs[0].Refused(); n > 2 {
				t.Errorf("replica A refused %d streams before the agent reached B; want 1 or 2", n)
			}
		})
	}
}

// TestGoodbyeMovesOnFromOneOfThree: of three replicas tried in order, the
// first refuses every stream; the agent streams on one of the others
// within two refusals, and stays there.
func TestGoodbyeMovesOnFromOneOfThree(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hubs := replicas(t, certs, "127.0.0.1", "127.0.0.2", "127.0.0.3")
	hubs[0].Refuse(goodbye(agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN))
	startAgent(t, certs, "", t.TempDir(), withoutServerName, withDialOptions(inOrder),
		withAddrs(hubs[0].Addr, hubs[1].Addr, hubs[2].Addr))
	var s *hubtest.Stream
	select {
	case s = <-hubs[1].Streams:
	case s = <-hubs[2].Streams:
	case <-time.After(hubtest.Timeout):
		t.Fatalf("no stream on a healthy replica within %s; replica A refused %d", hubtest.Timeout, hubs[0].Refused())
	}
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.SyncDone(0))
	s.Recv(t, hubtest.Heartbeats)
	if n := hubs[0].Refused(); n > 2 {
		t.Errorf("replica A refused %d streams before the agent reached a healthy one; want at most 2", n)
	}
}

// TestGoodbyeShutdownRedialsOneAddress: with one address (a load balancer
// in front of the replicas), Goodbye SHUTDOWN makes the next stream come
// on a new connection, which the balancer may send to another backend.
func TestGoodbyeShutdownRedialsOneAddress(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.SyncDone(0), goodbye(agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN))
	next := hub.Next(t)
	if next.Peer() == s.Peer() {
		t.Errorf("the stream after Goodbye SHUTDOWN came from %s, the old connection; want a new connection", next.Peer())
	}
}

// TestGoodbyeSupersededKeepsConnection: Goodbye SUPERSEDED (another
// stream of the cluster took over) is no reason to leave the replica: the
// next stream, after the backoff, comes on the same connection to it.
func TestGoodbyeSupersededKeepsConnection(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hubs := replicas(t, certs, "127.0.0.1", "127.0.0.2")
	a := startAgent(t, certs, "", t.TempDir(), withoutServerName, withDialOptions(inOrder),
		withAddrs(hubs[0].Addr, hubs[1].Addr))
	s := hubs[0].Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), goodbye(agentv1.DisconnectReason_DISCONNECT_REASON_SUPERSEDED))
	next := hubs[0].Next(t)
	if next.Peer() != s.Peer() {
		t.Errorf("the stream after Goodbye SUPERSEDED came from %s, not %s; want the same connection", next.Peer(), s.Peer())
	}
	if n := a.backoff.Load(); n < 1 {
		t.Errorf("Backoff called %d times after Goodbye SUPERSEDED; want at least once", n)
	}
}

// TestRefusingReplicaBacksOff: a replica that refuses every stream at once
// does not make the agent spin: every refused stream is followed by the
// backoff (the agent's own, or the Goodbye's retry_after).
func TestRefusingReplicaBacksOff(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	hub.Refuse(goodbye(agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN))
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	deadline := time.Now().Add(hubtest.Timeout)
	for hub.Refused() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams refused within %s; want the agent to keep reconnecting", hub.Refused(), hubtest.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.stop(t)
	if refused, waits := hub.Refused(), a.backoff.Load(); waits < int64(refused-1) {
		t.Errorf("%d streams refused after %d backoff waits; want a wait after each", refused, waits)
	}
}
