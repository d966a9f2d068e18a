package ha_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	from    int64 // size of the log when the current process started
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
		tok, err := x.clients[0].CreateToken(ctx, &hubv1.CreateTokenRequest{
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
	a.from = 0
	if fi, err := os.Stat(a.log); err == nil {
		a.from = fi.Size()
	}
	p, err := proc.Start(sp, proc.Config{Name: "agent " + a.cluster, Bin: a.bin, Args: a.args, LogPath: a.log})
	if err != nil {
		return fmt.Errorf("start agent %s: %w", a.cluster, err)
	}
	a.p = p
	return nil
}

// onReplicaTries bounds the restarts of an agent by agentOnReplica: each
// lands on a replica at random (the agent shuffles its addresses), so
// twenty miss one of three replicas with odds of (2/3)^20, under 0.1 %.
const onReplicaTries = 20

// agentOnReplica makes agent k stream to replica i, restarting it until
// it does: a scenario that kills or cuts a replica measures the
// reconnects of its agents.
func (x *fixture) agentOnReplica(ctx context.Context, k, i int) error {
	a, want := x.agents[k], x.hubs[i].Listen
	for range onReplicaTries {
		addr, err := a.waitStream(ctx)
		if err != nil {
			return err
		}
		if addr == want {
			return nil
		}
		a.p.Stop(agentStopGrace)
		if err := a.start(x.sp); err != nil {
			return err
		}
	}
	return fmt.Errorf("agent %s not on hub-%d after %d restarts", a.cluster, i, onReplicaTries)
}

// streamTimeout bounds the wait for an agent's stream after its start.
const streamTimeout = time.Minute

// waitStream waits until the agent's current process has been welcomed
// by a hub and holds its stream, and returns the hub's address.
func (a *agentProc) waitStream(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	var addr string
	err := proc.Poll(ctx, pollFine, func(context.Context) error {
		if a.p.Exited() {
			return proc.Permanent(a.p.ExitError())
		}
		var err error
		addr, err = a.streamAddr()
		return err
	})
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", a.cluster, err)
	}
	return addr, nil
}

// streamAddr is the hub address of the current process's last welcome
// (its hub_addr) if no stream ended after it.
func (a *agentProc) streamAddr() (string, error) {
	f, err := os.Open(a.log)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(a.from, io.SeekStart); err != nil {
		return "", err
	}
	var addr string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Message {
		case msgStreamEnded:
			addr = ""
		case msgWelcomed:
			addr = l.HubAddr
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if addr == "" {
		return "", fmt.Errorf("no stream")
	}
	return addr, nil
}

// logLine is what the suite reads of an agent's JSON log line.
type logLine struct {
	Message   string `json:"@message"`
	Timestamp string `json:"@timestamp"`
	HubAddr   string `json:"hub_addr"` // of msgWelcomed
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
