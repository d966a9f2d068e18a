package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// Roles of the processes a Fleet starts, as Processes reports them.
const (
	RoleHub     = "hub"
	RoleAgent   = "agent"
	RoleCluster = "cluster"
)

// SharedEtcd is the Name under which Processes reports the kit's etcd,
// which serves every member cluster (each under its own prefix).
const SharedEtcd = "kit-etcd"

// Binary names the fleet runs from its BinDir.
const (
	binHub   = "tether-hub"
	binAgent = "tether-agent"
)

// BinEnv names the directory of tether-hub and tether-agent when
// Options.BinDir is empty.
const BinEnv = "TETHER_BIN"

// DefaultStartTimeout bounds a fleet's start-up when the caller's context
// has no deadline: clusters, hub, agents and the first heartbeats take some
// 10 s on two idle cores; the margin is for a loaded machine.
const DefaultStartTimeout = 3 * time.Minute

// Registration is how a fleet's agents get their identity.
type Registration string

const (
	// RegisterAuto registers with bootstrap tokens when the hub's
	// TokenService issues them, else mints certificates.
	RegisterAuto Registration = ""
	// RegisterToken: a one-use bootstrap token bound to the cluster name
	// (TokenService.CreateToken, as `tetherctl token create`), given to the
	// agent with the hub CA's pin (--token, --ca-hash, --cluster).
	RegisterToken Registration = "token"
	// RegisterMint: a certificate from `tether-hub mint-agent` (--cert,
	// --key, --ca).
	RegisterMint Registration = "mint"
)

// Options describes a fleet to start.
type Options struct {
	// Clusters are the member clusters, one agent each. Empty means
	// kit.Members(2).
	Clusters []kit.ClusterSpec

	// Dir receives everything (see the package doc for the layout). It must
	// be given; it is created if missing and left in place by Stop.
	Dir string

	// HubListen is the hub's --listen address; empty means 127.0.0.1:0
	// (a free port, read back from hub.addr).
	HubListen string

	// BinDir holds tether-hub and tether-agent; empty means $TETHER_BIN,
	// else <repo>/bin.
	BinDir string

	// KitBinDir holds the kit's binaries; empty means the kit's default.
	KitBinDir string

	// Registration is how agents get their identity; the zero value,
	// RegisterAuto, uses bootstrap tokens when the hub issues them.
	Registration Registration

	// Prepare, when set, runs once the clusters are ready and before the
	// agents start: install CRDs or other prerequisites of the members
	// there, so that the agents' first heartbeats already report them.
	Prepare func(ctx context.Context, env *kit.Env) error

	// HubArgs and AgentArgs are added to the hub's and every agent's
	// command line (e.g. "-log-level", "debug").
	HubArgs, AgentArgs []string

	// Wrap, when set, returns a command prefix for the hub (role RoleHub,
	// name "hub") or an agent (RoleAgent, its cluster's name), e.g.
	// {"ip", "netns", "exec", NS} to run it in a network namespace. The
	// prefix must exec the binary in place, so that the process's PID
	// stays the hub's or the agent's. Nil runs them directly.
	Wrap func(role, name string) []string

	// AgentKubeconfig, when set, returns the kubeconfig an agent uses for
	// its member cluster (e.g. one reaching the API server through an
	// address visible from the agent's network namespace). Nil means the
	// kit's admin kubeconfig.
	AgentKubeconfig func(c *kit.Cluster) (string, error)

	// Logger receives the fleet's and the kit's progress messages; nil
	// discards them.
	Logger hclog.Logger
}

// Fleet is a running hub with its member clusters and agents.
type Fleet struct {
	// Kit is the member clusters.
	Kit *kit.Env
	// Dir is Options.Dir, absolute.
	Dir string
	// HubDir is the hub's --data-dir.
	HubDir string
	// HubAddr is the address the hub listens on, host:port.
	HubAddr string
	// Registration is how the agents got their identity: RegisterToken or
	// RegisterMint.
	Registration Registration
	// AdminConfig is the hub's admin client config (HubDir/admin.conf). Its
	// server is the --listen address; Client uses HubAddr.
	AdminConfig string

	logger  hclog.Logger
	spawner *proc.Spawner
	wrap    func(role, name string) []string

	mu      sync.Mutex // guards hub, agents and stopped
	hub     *process
	agents  []*process // in cluster order
	stopped bool       // Stop has begun: nothing may start any more

	stopOnce sync.Once
}

// Start starts the clusters and the hub (at the same time), then an agent
// per cluster, and returns once every cluster is registered on the hub.
// ctx bounds the start-up only; without a deadline DefaultStartTimeout
// does.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if opts.Dir == "" {
		return nil, errors.New("fleet: Options.Dir is required")
	}
	if len(opts.Clusters) == 0 {
		opts.Clusters = kit.Members(2)
	}
	if opts.HubListen == "" {
		opts.HubListen = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	binDir, err := BinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	f := &Fleet{
		Dir:         dir,
		HubDir:      filepath.Join(dir, "hub"),
		AdminConfig: filepath.Join(dir, "hub", "admin.conf"),
		logger:      opts.Logger.Named("fleet"),
		spawner:     proc.NewSpawner(),
		wrap:        opts.Wrap,
	}
	begin := time.Now()
	if err := f.start(ctx, opts, binDir); err != nil {
		f.Stop()
		return nil, fmt.Errorf("fleet: %w", err)
	}
	f.logger.Info("fleet ready", "clusters", len(f.Kit.Clusters), "hub", f.HubAddr, "registration", string(f.Registration), "elapsed", time.Since(begin).Round(time.Millisecond))
	return f, nil
}

// start runs the hub while the kit starts the clusters, then the agents.
func (f *Fleet) start(ctx context.Context, opts Options, binDir string) error {
	if err := os.MkdirAll(f.HubDir, 0o755); err != nil {
		return err
	}
	if err := f.startHub(filepath.Join(binDir, binHub), opts.HubListen, opts.HubArgs); err != nil {
		return err
	}
	env, err := kit.Start(ctx, kit.Options{
		Clusters: opts.Clusters,
		Dir:      filepath.Join(f.Dir, "clusters"),
		Logger:   opts.Logger.Named("kit"),
		BinDir:   opts.KitBinDir,
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.Kit = env
	stopped := f.stopped
	f.mu.Unlock()
	if stopped { // Stop ran while the kit started: it could not stop the kit.
		env.Stop()
		return errors.New("stopped during start-up")
	}
	if opts.Prepare != nil {
		if err := opts.Prepare(ctx, env); err != nil {
			return fmt.Errorf("prepare the clusters: %w", err)
		}
	}
	if err := f.waitHub(ctx); err != nil {
		return err
	}
	client, err := f.Client()
	if err != nil {
		return err
	}
	defer client.Close()
	how := opts.Registration
	for _, c := range env.Clusters {
		creds, used, err := f.credentials(ctx, client, filepath.Join(binDir, binHub), c, how)
		if err != nil {
			return err
		}
		how, f.Registration = used, used // every agent the same way
		kubeconfig := c.KubeconfigPath
		if opts.AgentKubeconfig != nil {
			if kubeconfig, err = opts.AgentKubeconfig(c); err != nil {
				return fmt.Errorf("agent kubeconfig of %s: %w", c.Name, err)
			}
		}
		if err := f.startAgent(filepath.Join(binDir, binAgent), c, kubeconfig, creds, opts.AgentArgs); err != nil {
			return err
		}
	}
	return f.waitRegistered(ctx, client)
}

// Process is one process the fleet started.
type Process struct {
	Role string // RoleHub, RoleAgent or RoleCluster
	// Name is the cluster the process belongs to (its agent, or one of its
	// kit components), SharedEtcd for the kit's etcd, "hub" for the hub.
	Name      string
	Component string // binary name, e.g. "kube-apiserver"
	PID       int
	LogPath   string
}

// Processes lists every process the fleet has started: the hub, the
// agents, then every kit process.
func (f *Fleet) Processes() []Process {
	f.mu.Lock()
	var out []Process
	if f.hub != nil {
		out = append(out, Process{RoleHub, "hub", binHub, f.hub.PID(), f.hub.LogPath()})
	}
	for _, a := range f.agents {
		out = append(out, Process{RoleAgent, a.name, binAgent, a.PID(), a.LogPath()})
	}
	env := f.Kit
	f.mu.Unlock()
	if env != nil {
		for _, p := range env.Processes() {
			name := p.Cluster
			if name == "" {
				name = SharedEtcd
			}
			out = append(out, Process{RoleCluster, name, p.Component, p.PID, p.LogPath})
		}
	}
	return out
}

// Exited returns an error for the first hub or agent process that has
// ended although Stop was not called, quoting its log; nil when all run.
func (f *Fleet) Exited() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return nil
	}
	for _, p := range append([]*process{f.hub}, f.agents...) {
		if p != nil && p.Exited() {
			return p.ExitError()
		}
	}
	return nil
}

// Stop ends the agents, the hub and the clusters, in that order, and waits
// for every process. It leaves Dir in place. It is safe to call more than
// once and from any goroutine; during Start, cancel Start's context
// instead (a Stop then still stops what Start has started).
func (f *Fleet) Stop() {
	f.stopOnce.Do(f.stop)
}

func (f *Fleet) stop() {
	begin := time.Now()
	f.mu.Lock()
	f.stopped = true
	agents, hub, env := slices.Clone(f.agents), f.hub, f.Kit
	f.mu.Unlock()

	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() { a.Stop(stopGrace) })
	}
	wg.Wait()
	if hub != nil {
		hub.Stop(stopGrace)
	}
	if env != nil {
		env.Stop()
	}
	f.spawner.Close()
	f.logger.Info("fleet stopped", "elapsed", time.Since(begin).Round(time.Millisecond))
}

// BinDir returns the directory of tether-hub and tether-agent: dir if not
// empty, else $TETHER_BIN, else <repo>/bin of the repository containing the
// working directory. It checks that both binaries are there.
func BinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(BinEnv)
	}
	if dir == "" {
		root, err := proc.RepoRoot()
		if err != nil {
			return "", fmt.Errorf("fleet: no Options.BinDir and no $%s: %w", BinEnv, err)
		}
		dir = filepath.Join(root, "bin")
	}
	for _, b := range []string{binHub, binAgent} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("fleet: %s not found in %s (run `make build`, or set $%s): %w", b, dir, BinEnv, err)
		}
	}
	return dir, nil
}
