package main

import (
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeper starts `sleep 60` with argv[0] set to name, in its own process
// group, and kills it when the test ends. It returns a channel closed once
// the process has been reaped.
func sleeper(t *testing.T, name string) (int, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `exec -a "$0" sleep 60`, name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	// bash's own command line names name too (as $0), so wait for argv[0]:
	// only then has bash exec'd sleep, and no exec is left to race with.
	for argv0(pid) != name {
		if time.Now().After(deadline) {
			t.Fatalf("sleeper %q did not start", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return pid, done
}

// argv0 returns the first word of pid's command line, or "".
func argv0(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(data), "\x00")
	return first
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareStateStopsLeftoversAndWipes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".demo")
	if err := os.MkdirAll(filepath.Join(dir, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	ours, oursDone := sleeper(t, filepath.Join(dir, "clusters", "fake-apiserver"))
	foreign, _ := sleeper(t, "someone-elses-process") // a recycled PID
	writeFile(t, filepath.Join(dir, filePIDs), "cluster edge-1 "+strconv.Itoa(ours)+"\nhub hub "+strconv.Itoa(foreign)+"\n")

	st, err := prepareState(dir, "127.0.0.1:0", io.Discard)
	if err != nil {
		t.Fatalf("prepareState: %v", err)
	}
	select {
	case <-oursDone:
	case <-time.After(5 * time.Second):
		t.Errorf("process %d of the earlier demo still runs", ours)
	}
	if !alive(foreign) {
		t.Errorf("process %d, not the demo's (its command line does not name %s), was stopped", foreign, dir)
	}
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != fileDemoPID {
		t.Errorf("state directory after prepareState holds %v; want only %s", entries, fileDemoPID)
	}
}

func TestPrepareStateRefusesARunningDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pid, _ := sleeper(t, "/somewhere/bin/tether-demo")
	writeFile(t, filepath.Join(dir, fileDemoPID), strconv.Itoa(pid)+"\n")
	writeFile(t, filepath.Join(dir, "keep"), "state of the running demo")

	_, err := prepareState(dir, "127.0.0.1:0", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("prepareState with a running demo = %v; want an error saying a demo is already running", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Errorf("the running demo's state was touched: %v", err)
	}
}

func TestPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := portFree(l.Addr().String()); err == nil || !strings.Contains(err.Error(), "DEMO_LISTEN") {
		t.Errorf("portFree(%s) on a bound port = %v; want advice naming DEMO_LISTEN", l.Addr(), err)
	}
}
