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
	bin     string
	args    []string
}

// agentHubs are the hub addresses agent i is given: every replica, replica
// i mod n first (so that agent 0 starts on replica 0, the first leader),
// or that one only with options.singleHub.
func (x *fixture) agentHubs(i int) []string {
	var addrs []string
	for k := range x.hubs {
		addrs = append(addrs, x.hubs[(i+k)%len(x.hubs)].Listen)
	}
	if x.singleHub {
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
		a.bin, a.args = x.agentBin, args
		if err := a.start(x.sp); err != nil {
			t.Fatal(err)
		}
		x.agents = append(x.agents, a)
	}
}

// start starts the agent's process (again, after a stop: its state and
// certificate are in its data dir, the used token is ignored).
func (a *agentProc) start(sp *proc.Spawner) error {
	p, err := proc.Start(sp, proc.Config{Name: "agent " + a.cluster, Bin: a.bin, Args: a.args, LogPath: a.log})
	if err != nil {
		return fmt.Errorf("start agent %s: %w", a.cluster, err)
	}
	a.p = p
	return nil
}

// onReplicaTries bounds the agent restarts of agentOnReplica: each lands
// on a replica at random (the agent shuffles its addresses), so twenty
// miss one of three replicas with odds of (2/3)^20, under 0.1 %.
const onReplicaTries = 20

// agentOnReplica makes sure some agent streams to replica i, restarting
// agent 0 until one does: a scenario that kills a replica measures the
// reconnects of its agents.
func (x *fixture) agentOnReplica(ctx context.Context, i int) error {
	for range onReplicaTries {
		if err := x.agentsStreaming(ctx); err != nil {
			return err
		}
		v, err := x.hubs[i].Metric(ctx, "tether_hub_agent_streams")
		if err != nil {
			return err
		}
		if v != "0" {
			return nil
		}
		a := x.agents[0]
		a.p.Stop(agentStopGrace)
		if err := a.start(x.sp); err != nil {
			return err
		}
	}
	return fmt.Errorf("no agent streams to hub-%d after %d restarts of agent %s", i, onReplicaTries, x.agents[0].cluster)
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

// firstLogAt returns when the JSON log at path first said msg at or after
// since; found false when it did not.
func firstLogAt(path, msg string, since time.Time) (at time.Time, found bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Message != msg {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil && !at.Before(since) {
			return at, true, nil
		}
	}
	return time.Time{}, false, sc.Err()
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
