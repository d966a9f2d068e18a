package ha

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// hubStopGrace is how long a replica may take to exit on SIGTERM: the hub
// lets calls finish for up to 10 s; the margin is for a loaded machine.
const hubStopGrace = 15 * time.Second

// hubStartTimeout bounds a replica's start-up (hub.addr written).
const hubStartTimeout = time.Minute

// pollInterval is how often the suite checks a condition it waits for:
// the resolution of its start-up waits (figures use finer polls).
const pollInterval = 50 * time.Millisecond

// Replica is one tether-hub process on the shared etcd, started from a
// given binary so that a rolling upgrade can replace it by another.
type Replica struct {
	// Index is the replica's number, 0 to n-1.
	Index int
	// Dir is its --data-dir; LogPath its output, appended to across
	// restarts.
	Dir, LogPath string
	// Listen is its --listen address, fixed so that a restarted replica
	// serves where its agents and clients dial; Metrics its
	// --metrics-listen.
	Listen, Metrics string

	sp   *proc.Spawner
	wrap []string // command prefix (ip netns exec NS), or nil
	args []string // the flags after --data-dir, --listen, --metrics-listen

	mu   sync.Mutex // guards p and bin
	p    *proc.Process
	bin  string
	stop bool // Stop has begun: Start refuses
}

// NewReplica describes replica i; Start starts it.
func NewReplica(sp *proc.Spawner, i int, dir, listen, metrics string, wrap, args []string) *Replica {
	return &Replica{Index: i, Dir: dir, LogPath: dir + ".log", Listen: listen, Metrics: metrics, sp: sp, wrap: wrap, args: args}
}

// Start starts the replica from bin (its tether-hub), extra flags added to
// its own. It does not wait: WaitServing does.
func (r *Replica) Start(bin string, extra ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop {
		return fmt.Errorf("start hub %d: stopped", r.Index)
	}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(r.Dir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	args := append([]string{"--data-dir", r.Dir, "--listen", r.Listen, "--metrics-listen", r.Metrics, "--log-format", "json"}, r.args...)
	args = append(args, extra...)
	cmd := bin
	if len(r.wrap) > 0 {
		cmd, args = r.wrap[0], append(append(append([]string{}, r.wrap[1:]...), bin), args...)
	}
	p, err := proc.Start(r.sp, proc.Config{Name: fmt.Sprintf("hub %d", r.Index), Bin: cmd, Args: args, LogPath: r.LogPath})
	if err != nil {
		return fmt.Errorf("start hub %d: %w", r.Index, err)
	}
	r.p, r.bin = p, bin
	return nil
}

func (r *Replica) current() *proc.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.p
}

// Bin is the binary the replica was last started from.
func (r *Replica) Bin() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bin
}

// WaitServing waits until the replica has written hub.addr (it then
// serves agents and clients), failing at once if it exits.
func (r *Replica) WaitServing(ctx context.Context) error {
	p := r.current()
	ctx, cancel := context.WithTimeout(ctx, hubStartTimeout)
	defer cancel()
	err := proc.Poll(ctx, pollInterval, func(context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		if _, err := os.Stat(filepath.Join(r.Dir, "hub.addr")); err != nil {
			return fmt.Errorf("no hub.addr yet")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("hub %d: %w", r.Index, err)
	}
	return nil
}

// Kill ends the replica with SIGKILL (a crash) and waits until it is
// reaped.
func (r *Replica) Kill() {
	if p := r.current(); p != nil {
		_ = syscall.Kill(p.PID(), syscall.SIGCONT)
		p.Stop(0)
	}
}

// Terminate stops the replica with SIGTERM (a rolling restart's stop), and
// SIGKILL after hubStopGrace.
func (r *Replica) Terminate() {
	if p := r.current(); p != nil {
		p.Stop(hubStopGrace)
	}
}

// Stop terminates the replica for good: Start refuses afterwards.
func (r *Replica) Stop() {
	r.mu.Lock()
	r.stop = true
	r.mu.Unlock()
	r.Terminate()
}

// Exited returns why the replica ended, or nil while it runs.
func (r *Replica) Exited() error {
	if p := r.current(); p != nil && p.Exited() {
		return p.ExitError()
	}
	return nil
}

// Done is closed when the replica's current process has exited.
func (r *Replica) Done() <-chan struct{} { return r.current().Done() }

// LeaderName is the suffix of the replica's value under /tether/leader
// (the hub writes host/listen-address there).
func (r *Replica) LeaderName() string { return "/" + r.Listen }

// metricsTimeout bounds one scrape of a replica's /metrics: longer than
// the hub's own bound on the store query of a scrape (2 s), which a
// replica cut off etcd waits out.
const metricsTimeout = 5 * time.Second

// Metric returns the value of an unlabelled metric on the replica's
// /metrics, as its text says it.
func (r *Replica) Metric(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Metrics+"/metrics", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("hub %d metrics: %w", r.Index, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("hub %d metrics: %w", r.Index, err)
	}
	return "", fmt.Errorf("hub %d metrics: no %s", r.Index, name)
}

// Leading reports the replica's tether_hub_leader.
func (r *Replica) Leading(ctx context.Context) (bool, error) {
	v, err := r.Metric(ctx, "tether_hub_leader")
	return v == "1", err
}

// Client connects to the replica as its admin (its admin.conf, whose
// certificate the shared CA signed: every replica accepts it). The caller
// closes it.
func (r *Replica) Client() (*fleet.Client, error) {
	cfg, err := clientconfig.Load(filepath.Join(r.Dir, "admin.conf"))
	if err != nil {
		return nil, err
	}
	cfg.Server = r.Listen
	return fleet.Dial(cfg)
}
