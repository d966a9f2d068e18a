package kit

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

	"github.com/tetherproj/tether/test/proc"
)

// Env is a set of running member clusters and the etcd they share.
type Env struct {
	// Clusters in the order of Options.Clusters.
	Clusters []*Cluster

	// Dir holds everything the Env writes (see Options.Dir).
	Dir string

	// EtcdURL is the shared etcd's client URL (http://127.0.0.1:port). Each
	// cluster stores its objects under its own prefix, /clusters/<name>.
	EtcdURL string

	logger    hclog.Logger
	binDir    string
	extraArgs map[string][]string // Options.ExtraArgs
	ownDir    bool                // Dir was created by Start, so Stop removes it
	spawner   *proc.Spawner

	mu      sync.Mutex // guards procs and stopped; held while a process is spawned
	procs   []*process // every process ever started, in start order
	stopped bool       // Stop has begun; no process may start any more

	stopOnce sync.Once
}

// Start starts the clusters of opts (all at once, after the shared etcd) and
// returns when every one is ready: its API server answers /readyz, its nodes
// are Ready and schedulable, and the `default` ServiceAccount exists. On error
// everything already started is stopped again, and the error quotes the log of
// the process that failed. ctx bounds the start-up only.
func Start(ctx context.Context, opts Options) (*Env, error) {
	specs, err := opts.clusterSpecs()
	if err != nil {
		return nil, err
	}
	binDir, err := BinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	e := &Env{Dir: opts.Dir, logger: opts.Logger, binDir: binDir, extraArgs: opts.ExtraArgs}
	if e.logger == nil {
		e.logger = hclog.NewNullLogger()
	}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "tether-kit-"); err != nil {
			return nil, fmt.Errorf("kit: %w", err)
		}
		e.ownDir = true
	} else if e.Dir, err = filepath.Abs(e.Dir); err != nil {
		return nil, fmt.Errorf("kit: %w", err)
	}
	e.spawner = proc.NewSpawner()

	begin := time.Now()
	if err := e.start(ctx, specs); err != nil {
		e.Stop()
		return nil, fmt.Errorf("kit: %w", err)
	}
	e.logger.Info("environment ready", "clusters", len(e.Clusters), "dir", e.Dir, "elapsed", time.Since(begin).Round(time.Millisecond))
	return e, nil
}

// start runs etcd, then every cluster in parallel; the first cluster error
// cancels the others.
func (e *Env) start(ctx context.Context, specs []ClusterSpec) error {
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	if err := e.startEtcd(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for _, spec := range specs {
		c := newCluster(e, spec)
		e.Clusters = append(e.Clusters, c)
		wg.Go(func() {
			if err := c.start(ctx); err != nil {
				errOnce.Do(func() { firstErr = fmt.Errorf("cluster %s: %w", c.Name, err) })
				cancel(errors.New("another cluster failed to start"))
			}
		})
	}
	wg.Wait()
	return firstErr
}

// Cluster returns the cluster with the given name, or nil.
func (e *Env) Cluster(name string) *Cluster {
	for _, c := range e.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Process describes a process the Env started.
type Process struct {
	Cluster   string // "" for the shared etcd
	Component string // binary name, e.g. "kube-apiserver"
	PID       int
	LogPath   string
}

// Processes lists every process the Env has started, including ones that have
// since been stopped or restarted, in start order.
func (e *Env) Processes() []Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Process, len(e.procs))
	for i, p := range e.procs {
		out[i] = Process{Cluster: p.cluster, Component: p.component, PID: p.PID(), LogPath: p.LogPath()}
	}
	return out
}

// PIDs lists the process IDs of Processes. After Stop none of them is alive.
func (e *Env) PIDs() []int {
	var pids []int
	for _, p := range e.Processes() {
		pids = append(pids, p.PID)
	}
	return pids
}

// Stop ends every process (SIGTERM, SIGKILL after a short grace) and waits
// for each to exit, cluster components first, then etcd. It removes Dir if
// Start created it. It is safe to call more than once and from any goroutine,
// but not while Start is still running (cancel Start's context instead).
func (e *Env) Stop() {
	e.stopOnce.Do(e.stop)
}

func (e *Env) stop() {
	begin := time.Now()
	e.mu.Lock()
	e.stopped = true
	procs := slices.Clone(e.procs)
	e.mu.Unlock()

	// Components before etcd, so that they do not spend their last seconds
	// retrying a storage that has gone.
	var wg sync.WaitGroup
	for _, p := range procs {
		if p.component != binEtcd {
			wg.Go(func() { p.Stop(stopGrace) })
		}
	}
	wg.Wait()
	for _, p := range procs {
		if p.component == binEtcd {
			p.Stop(stopGrace)
		}
	}
	e.spawner.Close()
	if e.ownDir {
		if err := os.RemoveAll(e.Dir); err != nil {
			e.logger.Warn("remove kit directory", "dir", e.Dir, "error", err)
		}
	}
	e.logger.Info("environment stopped", "processes", len(procs), "elapsed", time.Since(begin).Round(time.Millisecond))
}

// startProcess starts a binary with its output going to <dir>/<component>.log
// (appended to, so a restarted component keeps its history) and records it.
func (e *Env) startProcess(cluster, component, dir string, args []string, extraEnv ...string) (*process, error) {
	p := &process{cluster: cluster, component: component}
	logPath := filepath.Join(dir, component+".log")
	cfg := proc.Config{
		Name:    p.name(),
		Bin:     filepath.Join(e.binDir, component),
		Args:    append(slices.Clone(args), e.extraArgs[component]...),
		Env:     childEnv(extraEnv),
		LogPath: logPath,
		OnExit:  func(pid int, err error) { e.exited(p, pid, err, logPath) },
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil, fmt.Errorf("start %s: %w", p.name(), errStopped)
	}
	var err error
	if p.Process, err = proc.Start(e.spawner, cfg); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.name(), err)
	}
	e.procs = append(e.procs, p)
	e.logger.Debug("process started", "process", p.name(), "pid", p.PID(), "log", logPath)
	return p, nil
}

// exited reports an exit of p nobody asked for. It runs before p is marked
// done, so nothing is logged after Stop has returned (a test logger must not
// be used once its test has ended). It may run before startProcess has set
// p.Process, so it takes what it logs as arguments.
func (e *Env) exited(p *process, pid int, err error, logPath string) {
	e.mu.Lock()
	stopping := e.stopped
	e.mu.Unlock()
	if !stopping && !p.stopRequested.Load() {
		e.logger.Warn("process exited", "process", p.name(), "pid", pid, "error", err, "log", logPath)
	}
}
