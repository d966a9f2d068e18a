package hubclient_test

import (
	"context"
	"net"
	"slices"
	"testing"

	"google.golang.org/grpc"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// inOrder replaces the shuffled order of the hub addresses by the order
// given, so that a test knows which address is tried first.
var inOrder = grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"pick_first": {}}]}`)

func withAddrs(addrs ...string) option {
	return func(c *hubclient.Config) { c.Addrs = addrs }
}

func withDialOptions(opts ...grpc.DialOption) option {
	return func(c *hubclient.Config) { c.DialOptions = append(c.DialOptions, opts...) }
}

// withoutServerName leaves the TLS server name to the client, as the
// agent does: each address must be verified for its own host.
func withoutServerName(c *hubclient.Config) { c.TLS.ServerName = "" }

// deadAddr is an address nothing listens on: connections are refused.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// hungAddr is an address that accepts TCP connections (the kernel does)
// and never answers the TLS handshake, like a frozen replica.
func hungAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// TestReplicasFailOver gives an agent a frozen replica, a dead address and
// two hub replicas, tried in that order, each replica serving a
// certificate for its own host only (127.0.0.1, 127.0.0.2). The stream
// reaches the first live replica; when that one stops, the next stream
// reaches the other with the works held from the first; when the first
// is back and the other stops, the stream comes back to the first. Each
// step passes the frozen and the dead address, within hubtest.Timeout
// (10 s): shorter than gRPC's connect timeout of the frozen one (20 s)
// and its backoff cap (30 s).
func TestReplicasFailOver(t *testing.T) {
	certs := hubtest.NewCerts(t)
	servingA, servingB := certs.ServingFor(t, "127.0.0.1"), certs.ServingFor(t, "127.0.0.2")
	replicaA := hubtest.StartServing(t, certs, "127.0.0.1:0", servingA)
	replicaB := hubtest.StartServing(t, certs, "127.0.0.2:0", servingB)
	startAgent(t, certs, "", t.TempDir(), withoutServerName, withDialOptions(inOrder),
		withAddrs(hungAddr(t), deadAddr(t), replicaA.Addr, replicaB.Addr))

	s := replicaA.Next(t)
	syncFirst(t, s)
	replicaA.Stop()

	s = replicaB.Next(t)
	if held := heldKeys(s.Hello()); !slices.Equal(held, []string{"a", "b"}) || s.Hello().GetLastHubIdentity() != hubA {
		t.Fatalf("Hello to the second replica = %v; want works a and b held from %s", s.Hello(), hubA)
	}
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.SyncDoneKeys("a", "b"))
	replicaA = hubtest.StartServing(t, certs, replicaA.Addr, servingA)
	replicaB.Stop()

	s = replicaA.Next(t)
	if held := heldKeys(s.Hello()); !slices.Equal(held, []string{"a", "b"}) {
		t.Fatalf("Hello to the first replica again = %v; want works a and b", s.Hello())
	}
}

func heldKeys(h *agentv1.Hello) []string {
	var keys []string
	for _, w := range h.GetHeldWorks() {
		keys = append(keys, w.GetWorkKey())
	}
	slices.Sort(keys)
	return keys
}

// TestReplicasShuffled dials two replicas many times: the shuffled order
// sends streams to both (each dial picks the first replica with
// probability 1/2, so all 16 on one fails once in 2^15 runs).
func TestReplicasShuffled(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hubs := []*hubtest.Hub{hubtest.Start(t, certs, "127.0.0.1:0"), hubtest.Start(t, certs, "127.0.0.1:0")}
	tlsCfg := certs.ClientTLS(t)
	tlsCfg.ServerName = ""
	ctx, cancel := context.WithTimeout(context.Background(), hubtest.Timeout)
	defer cancel()
	got := map[*hubtest.Hub]int{}
	for range 16 {
		conn, err := hubclient.Dial([]string{hubs[0].Addr, hubs[1].Addr}, tlsCfg)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
		if err == nil {
			err = stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{}}})
		}
		if err != nil {
			t.Fatalf("open a stream: %v", err)
		}
		select {
		case s := <-hubs[0].Streams:
			got[hubs[0]]++
			s.Close(nil)
		case s := <-hubs[1].Streams:
			got[hubs[1]]++
			s.Close(nil)
		case <-ctx.Done():
			t.Fatal("no stream reached a replica")
		}
		conn.Close()
	}
	if got[hubs[0]] == 0 || got[hubs[1]] == 0 {
		t.Errorf("streams per replica = %d, %d; want some on each", got[hubs[0]], got[hubs[1]])
	}
}
