package fleet

import (
	"bufio"
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
)

// pollInterval is how often start-up conditions are checked (hub.addr,
// cluster registration), in the spirit of the kit's polls.
const pollInterval = 50 * time.Millisecond

// modulePath is the main module, whose go.mod marks the repository root.
const modulePath = "github.com/tetherproj/tether"

// errStopped is returned when a process would start after Stop.
var errStopped = errors.New("fleet stopped")

// spawn starts a process and records it, unless Stop has begun.
func (f *Fleet) spawn(role, name, bin string, args []string, logPath string) (*proc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return nil, fmt.Errorf("start %s %s: %w", role, name, errStopped)
	}
	p, err := startProc(f.spawner, role, name, bin, args, logPath)
	if err != nil {
		return nil, err
	}
	if role == RoleHub {
		f.hub = p
	} else {
		f.agents = append(f.agents, p)
	}
	f.logger.Debug("process started", "role", role, "name", name, "pid", p.pid(), "log", logPath)
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
	err := poll(ctx, func() error {
		if f.hub.exited() {
			return permanent{f.hub.exitError()}
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
func (f *Fleet) startAgent(agentBin string, c *kit.Cluster, creds, extra []string) error {
	dir := filepath.Join(f.Dir, "agents", c.Name)
	args := append(append(append(creds,
		"--kubeconfig", c.KubeconfigPath,
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
		resp, err := client.Tokens.CreateToken(ctx, &hubv1.CreateTokenRequest{
			Ttl: durationpb.New(agentTokenTTL), ClusterName: c.Name, Uses: 1,
			Description: "test/fleet agent of " + c.Name,
		})
		switch {
		case err == nil:
			return []string{"--hub", f.HubAddr, "--token", resp.GetToken(), "--ca-hash", resp.GetCaHash(), "--cluster", c.Name}, RegisterToken, nil
		case how == RegisterToken || status.Code(err) != codes.Unimplemented:
			return nil, how, fmt.Errorf("bootstrap token for %s: %w", c.Name, err)
		}
	}
	mint := exec.CommandContext(ctx, hubBin, "mint-agent", "--data-dir", f.HubDir, "--cluster", c.Name, "--out", dir)
	if out, err := mint.CombinedOutput(); err != nil {
		return nil, RegisterMint, fmt.Errorf("mint agent certificate for %s: %v: %s", c.Name, err, out)
	}
	return []string{"--hub", f.HubAddr,
		"--cert", filepath.Join(dir, "tls.crt"),
		"--key", filepath.Join(dir, "tls.key"),
		"--ca", filepath.Join(dir, "ca.crt"),
	}, RegisterMint, nil
}

// waitRegistered waits until the hub has registered every cluster (its
// agent connected and reported the APIs it serves), failing early if a
// process died.
func (f *Fleet) waitRegistered(ctx context.Context, c *Client) error {
	want := make([]string, len(f.Kit.Clusters))
	for i, cl := range f.Kit.Clusters {
		want[i] = cl.Name
	}
	return poll(ctx, func() error {
		if err := f.Exited(); err != nil {
			return permanent{err}
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

// permanent marks an error that ends a poll at once.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// poll calls cond every pollInterval until it returns nil, a permanent
// error, or ctx ends; then the error says what was last wrong.
func poll(ctx context.Context, cond func() error) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// repoRoot walks up from the working directory to the directory whose
// go.mod declares the tether module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above the working directory", modulePath)
		}
		dir = parent
	}
}

// isModuleRoot reports whether the go.mod at path declares the tether
// module (test/kitbin has a go.mod of its own).
func isModuleRoot(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
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
