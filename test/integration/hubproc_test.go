package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds a hub's start-up: the embedded etcd, the CA on first
// start, the first listing of every controller.
const startTimeout = 60 * time.Second

// hubProc is one tether-hub process.
type hubProc struct {
	t    *testing.T
	dir  string // --data-dir
	addr string // from hub.addr
	cmd  *exec.Cmd
	log  string        // the process's stderr and stdout
	done chan struct{} // closed when the process has exited
}

// startHub starts tether-hub on dir, listening on a free loopback port,
// and waits until it wrote hub.addr. It is killed at the end of the test.
func startHub(t *testing.T, dir string, extra ...string) *hubProc {
	t.Helper()
	// A stale hub.addr of an earlier run must not be taken for this one's.
	if err := os.Remove(filepath.Join(dir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	logf, err := os.CreateTemp(t.TempDir(), "hub-*.log")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "-log-level", "debug"}, extra...)
	h := &hubProc{t: t, dir: dir, cmd: exec.Command(hubBin, args...), log: logf.Name(), done: make(chan struct{})}
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("start tether-hub: %v", err)
	}
	go func() {
		_ = h.cmd.Wait()
		logf.Close()
		close(h.done)
	}()
	t.Cleanup(func() {
		h.kill()
		if t.Failed() {
			h.dumpLog()
		}
	})
	h.addr = h.waitAddr()
	return h
}

// waitAddr polls hub.addr until the hub wrote it, failing if the process
// exits first.
func (h *hubProc) waitAddr() string {
	h.t.Helper()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(h.dir, "hub.addr")); err == nil {
			return strings.TrimSpace(string(data))
		}
		select {
		case <-h.done:
			h.dumpLog()
			h.t.Fatalf("tether-hub exited during start-up: %v", h.cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
	}
	h.dumpLog()
	h.t.Fatalf("tether-hub wrote no hub.addr within %s", startTimeout)
	return ""
}

// kill9 kills the hub with SIGKILL and waits for it to be gone.
func (h *hubProc) kill9() {
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	<-h.done
}

// kill stops the hub gracefully, with SIGKILL if it takes too long.
func (h *hubProc) kill() {
	select {
	case <-h.done:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		h.t.Errorf("tether-hub did not stop within 20s of SIGTERM; killing it")
		h.kill9()
	}
}

// exitCode is the hub's exit code once it stopped.
func (h *hubProc) exitCode() int {
	<-h.done
	return h.cmd.ProcessState.ExitCode()
}

// logContains reports whether the hub's log holds s so far.
func (h *hubProc) logContains(s string) bool {
	data, _ := os.ReadFile(h.log)
	return bytes.Contains(data, []byte(s))
}

func (h *hubProc) dumpLog() {
	data, _ := os.ReadFile(h.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	h.t.Logf("last lines of the hub's log (%s):\n%s", h.dir, strings.Join(lines, "\n"))
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
