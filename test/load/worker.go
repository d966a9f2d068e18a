package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sync/errgroup"
)

// enrollParallel is how many agents one worker enrolls at once: signing
// is CPU-bound, and the machine has few cores.
const enrollParallel = 4

// WorkerConfig configures one worker process.
type WorkerConfig struct {
	// Control is the driver's address (host:port).
	Control string
	// Worker is this worker's number, in its events.
	Worker int
	// HubAddrs are the hub's addresses.
	HubAddrs []string
	// Enroll is EnrollMint (with HubDir) or EnrollToken (with Token and
	// CAFile).
	Enroll, HubDir, Token, CAFile string
	// First and Count: the worker hosts agents First..First+Count-1,
	// clusters Prefix-NNNNN.
	First, Count int
	Prefix       string
	// Ramp spreads the agents' first connects evenly over it.
	Ramp time.Duration
	// GCPercent and MemoryLimit set the worker's garbage collection
	// target and soft memory limit (bytes); zero keeps Go's.
	GCPercent   int
	MemoryLimit int64
}

// ClusterName is the name of simulated cluster i.
func ClusterName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

// worker hosts simulated agents and obeys the driver.
type worker struct {
	cfg    WorkerConfig
	log    hclog.Logger
	agents []*simAgent
	totals totals

	emitMu sync.Mutex // guards enc
	enc    *json.Encoder

	flapMu   sync.Mutex // guards stopFlap
	stopFlap func()     // ends the running flaps; nil when none run
}

// RunWorker enrolls and runs the worker's agents until ctx ends or the
// driver closes the control connection.
func RunWorker(ctx context.Context, cfg WorkerConfig, logger hclog.Logger) error {
	setGC(cfg.GCPercent, cfg.MemoryLimit)
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", cfg.Control)
	if err != nil {
		return fmt.Errorf("dial the driver: %w", err)
	}
	defer conn.Close()
	w := &worker{cfg: cfg, log: logger, enc: json.NewEncoder(conn)}
	enroll, err := w.enroller()
	if err != nil {
		return err
	}
	if err := w.build(ctx, enroll); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, a := range w.agents {
		a.start(ctx, time.Duration(int64(cfg.Ramp)*int64(i)/int64(max(len(w.agents), 1))))
	}
	defer w.stopAll()
	w.emit(Event{Kind: EventReady, Worker: cfg.Worker})
	go func() { <-ctx.Done(); conn.Close() }()
	err = w.obey(ctx, conn)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (w *worker) enroller() (enroller, error) {
	switch w.cfg.Enroll {
	case EnrollMint:
		return mintEnroller(w.cfg.HubDir)
	case EnrollToken:
		return tokenEnroller(w.cfg.HubAddrs, w.cfg.Token, w.cfg.CAFile)
	}
	return nil, fmt.Errorf("unknown enrollment %q: want %s or %s", w.cfg.Enroll, EnrollMint, EnrollToken)
}

// build enrolls every agent.
func (w *worker) build(ctx context.Context, enroll enroller) error {
	w.agents = make([]*simAgent, w.cfg.Count)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(enrollParallel)
	for i := range w.agents {
		g.Go(func() error {
			index := w.cfg.First + i
			name := ClusterName(w.cfg.Prefix, index)
			tlsCfg, err := enroll(ctx, name)
			if err != nil {
				return err
			}
			w.agents[i] = w.newAgent(index, name, tlsCfg)
			return nil
		})
	}
	return g.Wait()
}

func (w *worker) newAgent(index int, name string, tlsCfg *tls.Config) *simAgent {
	return newSimAgent(index, name, w.cfg.HubAddrs, tlsCfg, w.emit, &w.totals, w.log)
}

func (w *worker) stopAll() {
	w.endFlaps()
	var wg sync.WaitGroup
	for _, a := range w.agents {
		wg.Add(1)
		go func() { defer wg.Done(); a.stop() }()
	}
	wg.Wait()
}

// emit sends e to the driver; a failed send is logged (the driver is gone
// and the control connection's end stops the worker).
func (w *worker) emit(e Event) {
	if e.Worker == 0 {
		e.Worker = w.cfg.Worker
	}
	w.emitMu.Lock()
	defer w.emitMu.Unlock()
	if err := w.enc.Encode(e); err != nil {
		w.log.Debug("event not sent", "error", err)
	}
}

// obey runs the driver's commands until the connection ends.
func (w *worker) obey(ctx context.Context, conn net.Conn) error {
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		var c Command
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("command %q: %w", sc.Text(), err)
		}
		if err := w.do(ctx, c); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

func (w *worker) do(ctx context.Context, c Command) error {
	switch c.Op {
	case CmdExpect:
		for _, a := range w.agents {
			a.member.expect(c.Gen, c.Count)
		}
	case CmdRestart:
		for _, a := range w.pick(c.Fraction) {
			a.stop()
			if c.Forget {
				a.forget()
			}
			a.start(ctx, jitter(c.JitterMS))
		}
	case CmdFlap:
		w.flap(ctx, w.pick(c.Fraction), time.Duration(c.DownMS)*time.Millisecond, time.Duration(c.UpMS)*time.Millisecond)
	case CmdStopFlap:
		w.endFlaps()
	case CmdStats:
		var held int64
		for _, a := range w.agents {
			held += int64(a.member.held())
		}
		w.emit(Event{Kind: EventStats, Held: held, Upserts: w.totals.laterUpserts.Load(), Bytes: w.totals.laterBytes.Load()})
	default:
		return fmt.Errorf("unknown command %q", c.Op)
	}
	return nil
}

// pick returns about fraction of the agents, at random (at least one for
// a positive fraction).
func (w *worker) pick(fraction float64) []*simAgent {
	if fraction >= 1 {
		return w.agents
	}
	n := int(fraction*float64(len(w.agents)) + 0.5)
	if n == 0 && fraction > 0 {
		n = 1
	}
	var picked []*simAgent
	for _, i := range rand.Perm(len(w.agents))[:min(n, len(w.agents))] {
		picked = append(picked, w.agents[i])
	}
	return picked
}

func jitter(ms int64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(ms)) * time.Millisecond
}

// flap takes agents down and up until endFlaps; each agent starts at a
// random point of its cycle.
func (w *worker) flap(ctx context.Context, agents []*simAgent, down, up time.Duration) {
	w.endFlaps()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flapOne(ctx, a, down, up)
		}()
	}
	w.flapMu.Lock()
	w.stopFlap = func() { cancel(); wg.Wait() }
	w.flapMu.Unlock()
}

// flapOne cycles a until ctx ends, and leaves it up.
func flapOne(ctx context.Context, a *simAgent, down, up time.Duration) {
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	if !wait(jitter((down + up).Milliseconds())) {
		return
	}
	for {
		a.stop()
		ok := wait(down)
		a.start(context.WithoutCancel(ctx), 0)
		if !ok || !wait(up) {
			return
		}
	}
}

func (w *worker) endFlaps() {
	w.flapMu.Lock()
	stop := w.stopFlap
	w.stopFlap = nil
	w.flapMu.Unlock()
	if stop != nil {
		stop()
	}
}
