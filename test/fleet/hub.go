package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// pollInterval is how often start-up conditions are checked (hub.addr,
// cluster registration), in the spirit of the kit's polls.
const pollInterval = 50 * time.Millisecond

// errStopped is returned when a process would start after Stop.
var errStopped = errors.New("fleet stopped")

// spawn starts a process and records it, unless Stop has begun.
func (f *Fleet) spawn(role, name, bin string, args []string, logPath string) (*process, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return nil, fmt.Errorf("start %s %s: %w", role, name, errStopped)
	}
	if f.wrap != nil {
		if prefix := f.wrap(role, name); len(prefix) > 0 {
			bin, args = prefix[0], append(append(prefix[1:len(prefix):len(prefix)], bin), args...)
		}
	}
	p, err := startProcess(f.spawner, role, name, bin, args, logPath)
	if err != nil {
		return nil, err
	}
	f.record(p)
	f.logger.Debug("process started", "role", role, "name", name, "pid", p.PID(), "log", logPath)
	return p, nil
}

// startHub starts tether-hub on HubDir. A stale hub.addr is removed first
// so that waitHub cannot take an earlier run's address for this one's.
func (f *Fleet) startHub(bin, listen string, extra []string) error {
	if err := os.Remove(filepath.Join(f.HubDir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	args := append([]string{"--data-dir", f.HubDir, "--listen", listen}, extra...)
	_, err := f.spawn(RoleHub, "hub", bin, args, filepath.Join(f.Dir, "hub.log"))
	return err
}

// waitHub waits until the hub has written hub.addr (it has then bound its
// port, created its CA and written admin.conf).
func (f *Fleet) waitHub(ctx context.Context) error {
	path := filepath.Join(f.HubDir, "hub.addr")
	err := proc.Poll(ctx, pollInterval, func(ctx context.Context) error {
		if f.hub.Exited() {
			return proc.Permanent(f.hub.ExitError())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("no %s yet", path)
		}
		f.HubAddr = strings.TrimSpace(string(data))
		return nil
	})
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	f.logger.Info("hub ready", "addr", f.HubAddr, "data_dir", f.HubDir)
	return nil
}

// startAgent starts the agent of cluster c with the credentials args
// that register it (see credentials).
func (f *Fleet) startAgent(agentBin string, c *kit.Cluster, kubeconfig string, creds, extra []string) error {
	dir := filepath.Join(f.Dir, "agents", c.Name)
	args := append(append(append(creds,
		"--kubeconfig", kubeconfig,
		"--data-dir", filepath.Join(dir, "state"),
	), topologyArgs(c.Labels)...), extra...)
	_, err := f.spawn(RoleAgent, c.Name, agentBin, args, filepath.Join(dir, "agent.log"))
	return err
}

// agentTokenTTL is how long a fleet's bootstrap token is valid: the agent
// registers within seconds of its creation.
const agentTokenTTL = 10 * time.Minute

// credentials returns the agent flags that identify cluster c to the hub,
// with Registration's method: a bootstrap token bound to the cluster name
// (one use), or a certificate minted from the hub's CA. In RegisterAuto,
// a hub that does not serve TokenService yet means mint.
func (f *Fleet) credentials(ctx context.Context, client *Client, hubBin string, c *kit.Cluster, how Registration) ([]string, Registration, error) {
	dir := filepath.Join(f.Dir, "agents", c.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, how, err
	}
	if how != RegisterMint {
		resp, err := client.CreateToken(ctx, &hubv1.CreateTokenRequest{
			Ttl: durationpb.New(agentTokenTTL), ClusterName: c.Name, Uses: 1,
			Description: "test/fleet agent of " + c.Name,
		})
		switch {
		case err == nil:
			return append(HubFlag(f.HubAddr), "--token", resp.GetToken(), "--ca-hash", resp.GetCaHash(), "--cluster", c.Name), RegisterToken, nil
		case how == RegisterToken || status.Code(err) != codes.Unimplemented:
			return nil, how, fmt.Errorf("bootstrap token for %s: %w", c.Name, err)
		}
	}
	mint := exec.CommandContext(ctx, hubBin, "mint-agent", "--data-dir", f.HubDir, "--cluster", c.Name, "--out", dir)
	if out, err := mint.CombinedOutput(); err != nil {
		return nil, RegisterMint, fmt.Errorf("mint agent certificate for %s: %v: %s", c.Name, err, out)
	}
	return append(HubFlag(f.HubAddr),
		"--cert", filepath.Join(dir, "tls.crt"),
		"--key", filepath.Join(dir, "tls.key"),
		"--ca", filepath.Join(dir, "ca.crt"),
	), RegisterMint, nil
}

// HubFlag is an agent's --hub flag for the hub replicas at addrs: one
// address, or several comma-separated for agents that accept a list
// (several replicas on one etcd, test/ha).
func HubFlag(addrs ...string) []string {
	return []string{"--hub", strings.Join(addrs, ",")}
}

// waitRegistered waits until the hub has registered every cluster (its
// agent connected and reported the APIs it serves), failing early if a
// process died.
func (f *Fleet) waitRegistered(ctx context.Context, c *Client) error {
	want := make([]string, len(f.Kit.Clusters))
	for i, cl := range f.Kit.Clusters {
		want[i] = cl.Name
	}
	return proc.Poll(ctx, pollInterval, func(ctx context.Context) error {
		if err := f.Exited(); err != nil {
			return proc.Permanent(err)
		}
		got, err := c.ReadyClusters(ctx)
		if err != nil {
			return err
		}
		var missing []string
		for _, name := range want {
			if !slices.Contains(got, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("clusters not registered on the hub yet: %s", strings.Join(missing, ", "))
		}
		return nil
	})
}

// topologyArgs reports a kit cluster's labels as the agent's topology: the
// "region" and "provider" labels as --region and --provider, all of them as
// --labels, so policies select fleet clusters as they would real ones.
func topologyArgs(labels map[string]string) []string {
	var args, pairs []string
	for _, flag := range []string{"region", "provider"} {
		if v := labels[flag]; v != "" {
			args = append(args, "--"+flag, v)
		}
	}
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	if len(pairs) > 0 {
		sort.Strings(pairs)
		args = append(args, "--labels", strings.Join(pairs, ","))
	}
	return args
}
