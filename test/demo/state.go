package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/fleet"
)

// Files of the state directory that tools rely on (issue 7).
const (
	fileConfig  = "tether.conf" // admin client config
	filePIDs    = "pids"        // ROLE NAME PID per process
	fileDemoPID = "demo.pid"    // this process, to refuse a second demo
)

// leftoverGrace is how long processes of an earlier demo get after SIGTERM
// before SIGKILL.
const leftoverGrace = 10 * time.Second

// state is the demo's directory.
type state struct {
	dir string // absolute
}

// prepareState makes dir fresh: it refuses if a demo is running there,
// stops what an earlier one left running, checks the hub's port is free,
// wipes dir and records this process.
func prepareState(dir, listen string, out io.Writer) (*state, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if pid, ok := livePID(filepath.Join(abs, fileDemoPID), "tether-demo"); ok && pid != os.Getpid() {
		return nil, fmt.Errorf("a demo is already running (pid %d, state in %s): stop it with Ctrl-C in its terminal or `kill %d`, then run make demo again", pid, dir, pid)
	}
	if err := stopLeftovers(abs, out); err != nil {
		return nil, err
	}
	if err := portFree(listen); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(abs); err != nil {
		return nil, fmt.Errorf("wipe %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(abs, fileDemoPID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, err
	}
	return &state{dir: abs}, nil
}

// record writes the pids file and the admin config (with the address the
// hub actually listens on).
func (s *state) record(f *fleet.Fleet) error {
	var b bytes.Buffer
	for _, p := range f.Processes() {
		fmt.Fprintf(&b, "%s %s %d\n", p.Role, p.Name, p.PID)
	}
	if err := os.WriteFile(filepath.Join(s.dir, filePIDs), b.Bytes(), 0o644); err != nil {
		return err
	}
	cfg, err := clientconfig.Load(f.AdminConfig)
	if err != nil {
		return err
	}
	cfg.Server = f.HubAddr
	return cfg.Write(filepath.Join(s.dir, fileConfig))
}

// stopLeftovers stops the processes an earlier demo's pids file lists that
// still run (the demo itself died without stopping them). A process counts
// as the demo's only if its command line names the state directory, so a
// recycled PID is never touched.
func stopLeftovers(dir string, out io.Writer) error {
	f, err := os.Open(filepath.Join(dir, filePIDs))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var live []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		pid, err := strconv.Atoi(fields[2])
		if err == nil && pid > 0 && cmdlineHas(pid, dir) {
			live = append(live, pid)
		}
	}
	if len(live) == 0 {
		return nil
	}
	fmt.Fprintf(out, ">> stopping %d processes an earlier demo left running: %v\n", len(live), live)
	for _, pid := range live {
		_ = syscall.Kill(-pid, syscall.SIGTERM) // each is its process group's leader
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(leftoverGrace)
	for _, pid := range live {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, pid := range live {
		for i := 0; alive(pid) && i < 50; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid) {
			return fmt.Errorf("process %d of an earlier demo survives SIGKILL; stop it by hand", pid)
		}
	}
	return nil
}

// livePID reads a PID file and reports whether that process runs a command
// whose line contains want.
func livePID(path, want string) (int, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, cmdlineHas(pid, want)
}

// cmdlineHas reports whether process pid exists (and is not a zombie) and
// its command line contains s.
func cmdlineHas(pid int, s string) bool {
	if !alive(pid) {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(data, []byte(s))
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] != 'Z'
	}
	return true
}

// portFree fails with advice when the hub's address is taken.
func portFree(listen string) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("the hub's address %s is not free (%v): stop what uses it, or run make demo DEMO_LISTEN=127.0.0.1:PORT", listen, err)
	}
	return l.Close()
}
