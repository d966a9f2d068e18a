package load

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// Config configures a load run.
type Config struct {
	// Dir receives the hub's data directory, the logs, results.json and
	// the plots.
	Dir string
	// HubBin is tether-hub; LoadBin is this tool's command (tether-load),
	// started once per worker as `LoadBin worker ...`.
	HubBin, LoadBin string
	// Agents is how many simulated agents run, in Workers processes.
	Agents, Workers int
	// Enroll is EnrollMint or EnrollToken.
	Enroll string
	// Ramp spreads the agents' first connects over it.
	Ramp time.Duration
	// Scenarios to run, in order: a subset of Scenarios.
	Scenarios []string
	// WorksPerAgent is the number of templates of scenario works (each
	// Duplicated to every agent).
	WorksPerAgent int
	// Idle is how long scenario idle measures.
	Idle time.Duration
	// Timeout bounds each wait of a scenario (all acks, all synced).
	Timeout time.Duration
	// StormJitter spreads scenario storm's reconnects over it.
	StormJitter time.Duration
	// Flap is how long scenario flap lasts; FlapFraction of the agents
	// flap, FlapDown down and FlapUp up.
	Flap, FlapDown, FlapUp time.Duration
	FlapFraction           float64
	// HubArgs are added to the hub's command line.
	HubArgs []string
	// CountKeys stops the hub at the end and counts its etcd keys.
	CountKeys bool
	// WorkerGCPercent and WorkerMemoryLimit (bytes) are each worker's
	// garbage collection target and soft memory limit; zero:
	// DefaultWorkerGCPercent, and half of the machine's memory shared
	// among the workers, at most 2 GiB (workerMemoryLimit).
	WorkerGCPercent   int
	WorkerMemoryLimit int64
}

// driver runs one load run.
type driver struct {
	cfg     Config
	log     hclog.Logger
	sp      *proc.Spawner
	hub     *hubProc
	admin   *fleet.Client
	track   *tracker
	sampler *sampler
	res     *Results

	connsMu sync.Mutex // guards conns
	conns   []net.Conn // to the workers
	workers []*proc.Process
	// gen is the generation the templates were last applied with.
	gen int
}

// Run starts a fresh hub (what an earlier run left in cfg.Dir is removed)
// and the workers, runs the scenarios, and writes results.json and the
// plots into cfg.Dir.
func Run(ctx context.Context, cfg Config, logger hclog.Logger) (*Results, error) {
	if err := os.RemoveAll(filepath.Join(cfg.Dir, "hub")); err != nil {
		return nil, fmt.Errorf("remove the earlier run's hub: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	d := &driver{cfg: cfg, log: logger, sp: proc.NewSpawner(), track: newTracker(),
		res: &Results{Agents: cfg.Agents, Workers: cfg.Workers, Enroll: cfg.Enroll, Load: loadAvg()}}
	defer d.sp.Close()
	err := d.run(ctx)
	d.res.Errors = d.track.agentErrors()
	if d.sampler != nil {
		d.res.Samples = d.sampler.all()
	}
	if werr := d.res.write(cfg.Dir); werr != nil && err == nil {
		err = werr
	}
	return d.res, err
}

func (d *driver) run(ctx context.Context) error {
	var err error
	d.hub, err = startHub(ctx, d.sp, d.cfg.HubBin, d.cfg.Dir, d.hubArgs())
	if err != nil {
		return fmt.Errorf("start the hub: %w", err)
	}
	defer func() {
		if d.hub != nil {
			d.hub.stop()
		}
	}()
	d.sampler = newSampler(d.hub.pid)
	go d.sampler.run(ctx)
	defer d.sampler.stop()
	if d.admin, err = d.dialAdmin(); err != nil {
		return err
	}
	defer d.admin.Close()
	if err := d.applyPolicy(ctx); err != nil {
		return err
	}
	if err := d.startWorkers(ctx); err != nil {
		return err
	}
	defer d.stopWorkers()
	err = d.scenarios(ctx)
	d.sampler.phase("end")
	if d.cfg.CountKeys {
		// Also after a failed scenario: what the store holds then tells.
		err = errors.Join(err, d.countKeys(context.WithoutCancel(ctx)))
	}
	return err
}

func (d *driver) scenarios(ctx context.Context) error {
	for _, s := range d.cfg.Scenarios {
		d.sampler.phase(s)
		d.log.Info("scenario", "name", s, "agents", d.cfg.Agents)
		if err := d.scenario(ctx, s); err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	return nil
}

// hubArgs are the hub's flags: registrations from the one source address
// of every simulated agent go through at the hub's total rate.
func (d *driver) hubArgs() []string {
	return append([]string{"--registration-rate", "1000", "--registration-burst", "1000"}, d.cfg.HubArgs...)
}

func (d *driver) dialAdmin() (*fleet.Client, error) {
	cfg, err := clientconfig.Load(filepath.Join(d.hub.dir, "admin.conf"))
	if err != nil {
		return nil, err
	}
	cfg.Server = d.hub.addr
	return fleet.Dial(cfg)
}

// countKeys stops the hub and counts its etcd keys.
func (d *driver) countKeys(ctx context.Context) error {
	d.stopWorkers()
	d.hub.stop()
	d.hub = nil
	keys, db, byPrefix, err := (&hubProc{dir: filepath.Join(d.cfg.Dir, "hub")}).storeKeys(ctx)
	if err != nil {
		return err
	}
	d.res.EtcdKeys, d.res.EtcdBytes, d.res.EtcdKeysByPrefix = keys, db, byPrefix
	return nil
}

// gcArgs are the workers' garbage collection flags.
func (d *driver) gcArgs() []string {
	percent, limit := d.cfg.WorkerGCPercent, d.cfg.WorkerMemoryLimit
	if percent <= 0 {
		percent = DefaultWorkerGCPercent
	}
	if limit <= 0 {
		limit = workerMemoryLimit(d.cfg.Workers)
	}
	return []string{"--gc-percent", strconv.Itoa(percent), "--memory-limit", strconv.FormatInt(limit, 10)}
}

// startWorkers starts cfg.Workers worker processes and waits until each
// has started its agents and every agent has synced once.
func (d *driver) startWorkers(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	enroll, err := d.enrollArgs(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	per := (d.cfg.Agents + d.cfg.Workers - 1) / d.cfg.Workers
	for w := 0; w*per < d.cfg.Agents; w++ {
		args := append([]string{"worker", "--control", l.Addr().String(), "--worker", strconv.Itoa(w + 1),
			"--hub", d.hub.addr, "--first", strconv.Itoa(w * per), "--count", strconv.Itoa(min(per, d.cfg.Agents-w*per)),
			"--ramp", d.cfg.Ramp.String()}, d.gcArgs()...)
		args = append(args, enroll...)
		p, err := proc.Start(d.sp, proc.Config{Name: fmt.Sprintf("worker %d", w+1), Bin: d.cfg.LoadBin, Args: args,
			LogPath: filepath.Join(d.cfg.Dir, fmt.Sprintf("worker-%d.log", w+1))})
		if err != nil {
			return err
		}
		d.workers = append(d.workers, p)
	}
	ready := make(chan int, len(d.workers))
	for range d.workers {
		conn, err := acceptCtx(ctx, l, d.workers)
		if err != nil {
			return err
		}
		d.connsMu.Lock()
		d.conns = append(d.conns, conn)
		d.connsMu.Unlock()
		go d.listen(conn, ready)
	}
	if err := d.waitReady(ctx, ready); err != nil {
		return err
	}
	d.res.Enrolled = time.Since(start).Seconds()
	syncs, err := d.waitSynced(ctx, start)
	if err != nil {
		return err
	}
	d.res.Connect = summarize(latencies(start, atOf(syncs)))
	d.res.Connect.Load = loadAvg()
	if err := d.waitRegistered(ctx); err != nil {
		return err
	}
	d.res.Registered = time.Since(start).Seconds()
	return nil
}

// listEvery is how often the driver lists the hub's clusters: a list of
// 10,000 is work for the hub.
const listEvery = time.Second

// waitRegistered waits until the hub lists every agent's cluster Ready,
// so that the scenarios start from a settled hub.
func (d *driver) waitRegistered(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	return proc.Poll(ctx, listEvery, func(ctx context.Context) error {
		if err := d.workersAlive(); err != nil {
			return proc.Permanent(err)
		}
		resp, err := d.admin.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{})
		if err != nil {
			return err
		}
		ready := 0
		for _, c := range resp.GetClusters() {
			if c.GetState() == hubv1.ClusterState_CLUSTER_STATE_READY {
				ready++
			}
		}
		if ready < d.cfg.Agents {
			return fmt.Errorf("%d of %d clusters registered and ready", ready, d.cfg.Agents)
		}
		return nil
	})
}

// enrollArgs are the workers' enrollment flags; a token is created for
// EnrollToken.
func (d *driver) enrollArgs(ctx context.Context) ([]string, error) {
	if d.cfg.Enroll != EnrollToken {
		return []string{"--enroll", EnrollMint, "--hub-dir", d.hub.dir}, nil
	}
	resp, err := d.admin.CreateToken(ctx, &hubv1.CreateTokenRequest{
		Ttl: durationpb.New(time.Hour), Description: "tether-load: every simulated agent",
	})
	if err != nil {
		return nil, fmt.Errorf("create a bootstrap token: %w", err)
	}
	caFile := filepath.Join(d.hub.dir, "pki", "ca.crt")
	return []string{"--enroll", EnrollToken, "--token", resp.GetToken(), "--ca-file", caFile}, nil
}

// acceptCtx accepts one connection, failing when ctx ends or a worker
// exits first.
func acceptCtx(ctx context.Context, l net.Listener, workers []*proc.Process) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := l.Accept(); ch <- res{c, err} }()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-ch:
			return r.c, r.err
		case <-ctx.Done():
			l.Close()
			return nil, ctx.Err()
		case <-tick.C:
			for _, w := range workers {
				if w.Exited() {
					l.Close()
					return nil, w.ExitError()
				}
			}
		}
	}
}

// listen records the events of one worker.
func (d *driver) listen(conn net.Conn, ready chan<- int) {
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			d.log.Error("worker event", "error", err)
			continue
		}
		if e.Kind == EventReady {
			ready <- e.Worker
			continue
		}
		d.track.record(e)
	}
}

// waitReady waits until every worker has started its agents.
func (d *driver) waitReady(ctx context.Context, ready <-chan int) error {
	n := 0
	return d.poll(ctx, func() error {
		for {
			select {
			case <-ready:
				n++
				continue
			default:
			}
			if n < len(d.workers) {
				return fmt.Errorf("%d of %d workers ready", n, len(d.workers))
			}
			return nil
		}
	})
}

// send sends c to every worker.
func (d *driver) send(c Command) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	d.connsMu.Lock()
	defer d.connsMu.Unlock()
	var errs []error
	for _, conn := range d.conns {
		if _, err := conn.Write(line); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *driver) stopWorkers() {
	d.connsMu.Lock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
	d.connsMu.Unlock()
	for _, w := range d.workers {
		w.Stop(hubStopGrace)
	}
	d.workers = nil
}

// workersAlive fails when a worker has exited.
func (d *driver) workersAlive() error {
	for _, w := range d.workers {
		if w.Exited() {
			return w.ExitError()
		}
	}
	return nil
}

// waitSynced waits until every agent's latest SyncDone is at or after
// since, and returns those SyncDones.
func (d *driver) waitSynced(ctx context.Context, since time.Time) ([]Event, error) {
	var got []Event
	err := d.poll(ctx, func() error {
		got = d.track.syncedSince(since)
		if len(got) < d.cfg.Agents {
			return fmt.Errorf("%d of %d agents synced", len(got), d.cfg.Agents)
		}
		return nil
	})
	return got, err
}

// waitGen waits until every agent has reached gen, and returns when each
// did.
func (d *driver) waitGen(ctx context.Context, gen int) ([]int64, error) {
	var got []int64
	err := d.poll(ctx, func() error {
		got = d.track.reached(gen)
		if len(got) < d.cfg.Agents {
			return fmt.Errorf("%d of %d agents hold generation %d", len(got), d.cfg.Agents, gen)
		}
		return nil
	})
	return got, err
}

// poll calls cond until it passes, cfg.Timeout passes, or a worker exits.
func (d *driver) poll(ctx context.Context, cond func() error) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	return proc.Poll(ctx, pollEvery, func(context.Context) error {
		if err := d.workersAlive(); err != nil {
			return proc.Permanent(err)
		}
		return cond()
	})
}

func atOf(es []Event) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.At
	}
	return out
}

// loadAvg is the machine's load average (/proc/loadavg's first three
// fields), recorded with the figures: the machine is shared.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	return strings.Join(f[:min(3, len(f))], " ")
}
