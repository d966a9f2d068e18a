package load

import (
	"bytes"
	"context"
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

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/test/proc"
)

// Timing of the hub process.
const (
	// hubStartTimeout bounds the wait for hub.addr after a start.
	hubStartTimeout = 2 * time.Minute
	// hubStopGrace is how long a graceful stop may take before SIGKILL.
	hubStopGrace = 30 * time.Second
	// pollEvery is how often the driver checks a condition.
	pollEvery = 50 * time.Millisecond
	// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's
	// CPU times (100 on every Linux architecture Go supports).
	clockTicks = 100
)

// hubProc is the tether-hub process under test, on a fixed port so that
// a restarted hub is where the agents dial.
type hubProc struct {
	sp      *proc.Spawner
	bin     string
	dir     string // --data-dir
	addr    string
	args    []string
	logPath string

	mu sync.Mutex // guards p
	p  *proc.Process
}

// startHub starts tether-hub on a free port of 127.0.0.1 with extra flags.
func startHub(ctx context.Context, sp *proc.Spawner, bin, dir string, extra []string) (*hubProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	h := &hubProc{sp: sp, bin: bin, dir: filepath.Join(dir, "hub"), logPath: filepath.Join(dir, "hub.log")}
	h.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	h.args = append([]string{"--data-dir", h.dir, "--listen", h.addr}, extra...)
	return h, h.start(ctx)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start starts the process and waits until it has written hub.addr.
func (h *hubProc) start(ctx context.Context) error {
	addrFile := filepath.Join(h.dir, "hub.addr")
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	p, err := proc.Start(h.sp, proc.Config{Name: "tether-hub", Bin: h.bin, Args: h.args, LogPath: h.logPath})
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.p = p
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, hubStartTimeout)
	defer cancel()
	return proc.Poll(ctx, pollEvery, func(context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		if _, err := os.Stat(addrFile); err != nil {
			return err
		}
		return nil
	})
}

// pid is the running hub's process ID.
func (h *hubProc) pid() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.p.PID()
}

// kill9 kills the hub with SIGKILL and waits for it to be reaped.
func (h *hubProc) kill9() error {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	if err := killPID(p.PID()); err != nil {
		return err
	}
	<-p.Done()
	return nil
}

// stop ends the hub gracefully.
func (h *hubProc) stop() {
	h.mu.Lock()
	p := h.p
	h.mu.Unlock()
	p.Stop(hubStopGrace)
}

// storeKeys opens the stopped hub's embedded etcd and counts its keys,
// in all and by prefix (keyPrefix).
func (h *hubProc) storeKeys(ctx context.Context) (keys, dbBytes int64, byPrefix map[string]int64, err error) {
	st, err := store.Open(ctx, store.Config{DataDir: h.dir}, hclog.NewNullLogger())
	if err != nil {
		return 0, 0, nil, fmt.Errorf("open the hub's store: %w", err)
	}
	defer st.Close()
	if keys, dbBytes, err = st.Size(ctx); err != nil {
		return 0, 0, nil, err
	}
	kvs, _, err := st.List(ctx, "/")
	if err != nil {
		return 0, 0, nil, err
	}
	byPrefix = map[string]int64{}
	for _, kv := range kvs {
		byPrefix[keyPrefix(kv.Key)]++
	}
	return keys, dbBytes, byPrefix, nil
}

// keyPrefix is a key's first two segments, e.g. "/tether/clusters/".
func keyPrefix(key string) string {
	parts := strings.SplitN(strings.TrimPrefix(key, "/"), "/", 3)
	if len(parts) < 3 {
		return key
	}
	return "/" + parts[0] + "/" + parts[1] + "/"
}

// usage is one sample of a process: resident memory and CPU time used.
type usage struct {
	RSS int64         // bytes
	CPU time.Duration // user + system since start
}

// readUsage reads pid's /proc files.
func readUsage(pid int) (usage, error) {
	var u usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			u.RSS = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// Fields after the command (which may hold spaces) in parentheses;
	// utime and stime are fields 14 and 15, so 12 and 13 after it.
	rest := stat[bytes.LastIndexByte(stat, ')')+2:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.CPU = time.Duration(ut+st) * time.Second / clockTicks
	return u, nil
}
