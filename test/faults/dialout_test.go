package faults_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestHubNeverDialsOut: with the hub in its namespace and every agent
// behind the router's NAT, a fleet registers, places the examples and
// reports their status, and all the while the hub's namespace opens no
// connection (its counter stays 0) and nothing tries to open one towards an
// agent. Then the counters are shown to count: a connection opened from
// the hub's namespace is counted, and one towards an agent cannot even be
// attempted (no route: NAT).
func TestHubNeverDialsOut(t *testing.T) {
	x := newFixture(t, setup{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if ready, err := x.client.ReadyClusters(ctx); err != nil || len(ready) != len(x.names) {
		t.Fatalf("ReadyClusters() = %v, %v; want every cluster, connected through the NAT", ready, err)
	}
	dials, err := x.net.HubDialOuts()
	if err != nil {
		t.Fatal(err)
	}
	inbound, err := x.net.InboundAttempts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURES %s: hub_dial_outs=%d inbound_attempts=%d", t.Name(), dials, inbound)
	if dials != 0 || inbound != 0 {
		t.Errorf("hub dial-outs = %d, inbound attempts = %d; want 0 and 0", dials, inbound)
	}

	// The counter is live: a connection from the hub's namespace to the
	// router (refused, but opened) counts.
	router := net.JoinHostPort(routerAddr(x), "9")
	_ = dialFrom(ctx, x.net.HubNS(), router) // refused: only the attempt matters
	if dials, err = x.net.HubDialOuts(); err != nil || dials == 0 {
		t.Errorf("hub dial-outs after a connection from the hub's namespace = %d, %v; want > 0", dials, err)
	}
	// The hub's namespace has no route to an agent.
	agent := net.JoinHostPort(x.net.AgentAddr(0), "9")
	if err := dialFrom(ctx, x.net.HubNS(), agent); err == nil {
		t.Errorf("a connection from the hub's namespace to agent %s succeeded; want no route", agent)
	}
}

// routerAddr is the router's address on the hub's link.
func routerAddr(x *fixture) string {
	host, _, _ := net.SplitHostPort(x.net.HubListen())
	ip := net.ParseIP(host).To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]-1).String()
}

// dialFrom opens a TCP connection to addr from namespace ns (bash's
// /dev/tcp), closing it at once.
func dialFrom(ctx context.Context, ns, addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	if _, err := strconv.Atoi(port); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "timeout", "5", "bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port)
	return cmd.Run()
}
