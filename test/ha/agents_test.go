package ha_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/ha"
	"github.com/tetherproj/tether/test/proc"
)

// agentStopGrace is how long an agent may take to exit on SIGTERM.
const agentStopGrace = 10 * time.Second

// tokenTTL is how long an agent's bootstrap token is valid: it registers
// within seconds.
const tokenTTL = 10 * time.Minute

// agentProc is one tether-agent process.
type agentProc struct {
	cluster string
	p       *proc.Process
	log     string
	metrics string // --metrics-addr
}

// agentHubs are the hub addresses agent i is given: every replica, its
// own first (so that agent 0 starts on replica 0, the first leader), or
// only its own until agents accept a list (multiAddressAgents).
func (x *fixture) agentHubs(i int) []string {
	var addrs []string
	for k := range x.hubs {
		addrs = append(addrs, x.hubs[(i+k)%len(x.hubs)].Listen)
	}
	if !multiAddressAgents {
		return addrs[:1]
	}
	return addrs
}

// startAgents starts an agent per member with a bootstrap token from
// replica 0, each given its hub addresses (agentHubs).
func (x *fixture) startAgents(ctx context.Context) {
	t := x.t
	ports, err := ha.FreePorts(len(x.kit.Clusters))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, a := range x.agents {
			a.p.Stop(agentStopGrace)
		}
	})
	for i, c := range x.kit.Clusters {
		tok, err := x.clients[0].Tokens.CreateToken(ctx, &hubv1.CreateTokenRequest{
			Ttl: durationpb.New(tokenTTL), ClusterName: c.Name, Uses: 1, Description: "test/ha agent of " + c.Name})
		if err != nil {
			t.Fatalf("bootstrap token for %s: %v", c.Name, err)
		}
		dir := filepath.Join(x.dir, "agent-"+c.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		a := &agentProc{cluster: c.Name, log: filepath.Join(dir, "agent.log"), metrics: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i]))}
		args := append(fleet.HubFlag(x.agentHubs(i)...), "--token", tok.GetToken(), "--ca-hash", tok.GetCaHash(), "--cluster", c.Name,
			"--kubeconfig", c.KubeconfigPath, "--data-dir", filepath.Join(dir, "state"),
			"--metrics-addr", a.metrics, "--log-format", "json")
		if a.p, err = proc.Start(x.sp, proc.Config{Name: "agent " + c.Name, Bin: x.agentBin, Args: args, LogPath: a.log}); err != nil {
			t.Fatal(err)
		}
		x.agents = append(x.agents, a)
	}
}

// logLine is what the suite reads of an agent's JSON log line.
type logLine struct {
	Message   string `json:"@message"`
	Timestamp string `json:"@timestamp"`
}

// Messages of the agent's stream (agent/hubclient) the suite times.
const (
	msgStreamEnded = "hub stream ended; reconnecting"
	msgWelcomed    = "welcomed by the hub"
)

// reconnect says how long after since the agent was welcomed again by a
// hub, if its stream ended after since: lost false when it did not, and
// back -1 when it has not been welcomed again.
func (a *agentProc) reconnect(since time.Time) (lost bool, back time.Duration, err error) {
	f, err := os.Open(a.log)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	back = -1
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // not a log line of the agent's (e.g. a panic's trace)
		}
		at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if err != nil || at.Before(since) {
			continue
		}
		switch {
		case l.Message == msgStreamEnded:
			lost = true
		case l.Message == msgWelcomed && lost && back < 0:
			back = at.Sub(since)
		}
	}
	return lost, back, sc.Err()
}

// agentMetricsTimeout bounds one scrape of an agent's /metrics.
const agentMetricsTimeout = 2 * time.Second

// deletes sums the agent's member deletes and evictions
// (tether_agent_member_deletes_total, tether_agent_member_evictions_total).
func (a *agentProc) deletes(ctx context.Context) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, agentMetricsTimeout)
	defer cancel()
	lines, err := scrape(ctx, "http://"+a.metrics+"/metrics")
	if err != nil {
		return 0, fmt.Errorf("agent %s: %w", a.cluster, err)
	}
	var sum float64
	for _, l := range lines {
		if !strings.HasPrefix(l, "tether_agent_member_deletes_total") && !strings.HasPrefix(l, "tether_agent_member_evictions_total") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("agent %s: metric %q: %w", a.cluster, l, err)
		}
		sum += v
	}
	return sum, nil
}
