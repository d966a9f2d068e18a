package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// startTimeout bounds a hub's start-up: the embedded etcd, the CA on first
// start, the first listing of every controller.
const startTimeout = 60 * time.Second

// stopGrace is how long a hub may take to stop after SIGTERM before it is
// killed (and the test fails); the hub's own shutdown grace is 10 s.
const stopGrace = 20 * time.Second

// hubProc is one tether-hub process.
type hubProc struct {
	t    *testing.T
	dir  string // --data-dir
	addr string // from hub.addr
	p    *proc.Process
	log  string // the process's stderr and stdout
}

// startHub starts tether-hub on dir, listening on a free loopback port,
// and waits until it wrote hub.addr. It is stopped at the end of the test.
func startHub(t *testing.T, dir string, extra ...string) *hubProc {
	t.Helper()
	// A stale hub.addr of an earlier run must not be taken for this one's.
	if err := os.Remove(filepath.Join(dir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	args := append([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "-log-level", "debug"}, extra...)
	h := &hubProc{t: t, dir: dir, log: filepath.Join(t.TempDir(), "hub.log")}
	p, err := proc.Start(procs, proc.Config{Name: "tether-hub " + dir, Bin: hubBin, Args: args, LogPath: h.log})
	if err != nil {
		t.Fatalf("start tether-hub: %v", err)
	}
	h.p = p
	proc.StopAtEnd(t, p, stopGrace)
	h.addr = h.waitAddr()
	return h
}

// waitAddr polls hub.addr until the hub wrote it, failing if the process
// exits first.
func (h *hubProc) waitAddr() string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var addr string
	err := proc.Poll(ctx, 50*time.Millisecond, func(context.Context) error {
		if h.p.Exited() {
			return proc.Permanent(h.p.ExitError())
		}
		data, err := os.ReadFile(filepath.Join(h.dir, "hub.addr"))
		addr = strings.TrimSpace(string(data))
		return err
	})
	if err != nil {
		h.t.Fatalf("tether-hub wrote no hub.addr: %v", err)
	}
	return addr
}

// kill9 kills the hub with SIGKILL and waits for it to be gone.
func (h *hubProc) kill9() { h.p.Stop(0) }

// kill stops the hub gracefully, with SIGKILL (and a test error) if it
// takes longer than stopGrace.
func (h *hubProc) kill() {
	if !h.p.Stop(stopGrace) {
		h.t.Errorf("tether-hub did not stop within %s of SIGTERM; killed", stopGrace)
	}
}

// exitCode is the hub's exit code once it stopped.
func (h *hubProc) exitCode() int {
	<-h.p.Done()
	return h.p.ExitCode()
}

// logContains reports whether the hub's log holds s so far.
func (h *hubProc) logContains(s string) bool {
	data, _ := os.ReadFile(h.log)
	return bytes.Contains(data, []byte(s))
}

// poll calls cond until it returns true or timeout passes, then fails with
// what. cond may report its last state through the returned string.
func poll(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ctxFor returns a context that ends with the test.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
