package kit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/kit"
)

// Environment of the helper process that TestTeardownOnAbnormalExit starts.
const (
	helperEnv    = "TETHER_KIT_TEST_HELPER"     // how the helper ends
	helperDirEnv = "TETHER_KIT_TEST_HELPER_DIR" // where it puts its Env and its PID list
)

// goneDeadline is how long processes may take to disappear once their parent
// has died: the parent-death signal is immediate, so this is only the time
// for the kernel to deliver it and for the processes to exit.
const goneDeadline = 15 * time.Second

// TestHelperProcess is not a test: TestTeardownOnAbnormalExit runs the test
// binary again to execute only this, with helperEnv saying how to die once a
// cluster is running.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process of TestTeardownOnAbnormalExit")
	}
	dir := os.Getenv(helperDirEnv)
	opts := kit.Options{Dir: filepath.Join(dir, "env"), Logger: kit.TestLogger(t)}
	var env *kit.Env
	if mode == "fatal" || mode == "panic" {
		env = kit.StartT(t, opts) // teardown by t.Cleanup
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout)
		defer cancel()
		var err error // teardown by nothing but the parent-death signal
		if env, err = kit.Start(ctx, opts); err != nil {
			t.Fatal(err)
		}
	}
	if err := writePIDs(filepath.Join(dir, "pids"), env.PIDs()); err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "fatal":
		t.Fatal("helper: t.Fatal with a cluster running")
	case "panic":
		panic("helper: panic with a cluster running")
	case "goroutine-panic":
		// Cleanups do not run for a panic outside the test goroutine.
		go func() { panic("helper: panic in a goroutine with a cluster running") }()
		select {}
	case "sigkill":
		select {} // until the parent kills the process
	}
	t.Fatalf("unknown helper mode %q", mode)
}

// TestTeardownOnAbnormalExit runs a test process that starts a cluster and
// then dies in various ways, and checks that none of the cluster's processes
// outlive it.
func TestTeardownOnAbnormalExit(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		wantOut string // proof in the helper's output that it died as intended
	}{
		{mode: "fatal", wantOut: "helper: t.Fatal with a cluster running"},
		{mode: "panic", wantOut: "panic: helper: panic with a cluster running"},
		{mode: "goroutine-panic", wantOut: "panic: helper: panic in a goroutine"},
		{mode: "sigkill", wantOut: ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, pids := runHelper(t, tc.mode, dir)
			if !strings.Contains(out, tc.wantOut) {
				t.Fatalf("helper output lacks %q:\n%s", tc.wantOut, out)
			}
			if len(pids) != 5 {
				t.Errorf("helper recorded %d processes; want 5 (etcd and 4 per cluster)", len(pids))
			}
			deadline := time.Now().Add(goneDeadline)
			for {
				s := survivors(pids, dir)
				if len(s) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s after the helper died, still running:\n%s", goneDeadline, strings.Join(s, "\n"))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// runHelper runs TestHelperProcess in mode, kills it once its cluster is up if
// mode is sigkill, and returns its output and the PIDs it recorded.
func runHelper(t *testing.T, mode, dir string) (string, []int) {
	ctx, cancel := context.WithTimeout(context.Background(), kit.StartTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDirEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pidsPath := filepath.Join(dir, "pids")

	var err error
	if mode == "sigkill" {
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
	waitForPIDs:
		for {
			select {
			case err = <-exited:
				t.Fatalf("helper exited (%v) before recording its processes:\n%s", err, out.String())
			case <-ticker.C:
				if _, statErr := os.Stat(pidsPath); statErr == nil {
					break waitForPIDs
				}
			}
		}
		if killErr := cmd.Process.Kill(); killErr != nil {
			t.Fatal(killErr)
		}
	}
	err = <-exited
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("helper: %v; want it to fail:\n%s", err, out.String())
	}
	pids, readErr := readPIDs(pidsPath)
	if readErr != nil {
		t.Fatalf("helper recorded no processes (%v):\n%s", readErr, out.String())
	}
	return out.String(), pids
}

// writePIDs writes pids atomically (rename), so a reader never sees half.
func writePIDs(path string, pids []int) error {
	b, err := json.Marshal(pids)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func readPIDs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	return pids, json.Unmarshal(b, &pids)
}

// survivors describes the processes among pids that are still alive, and any
// process whose command line mentions dir.
func survivors(pids []int, dir string) []string {
	var out []string
	for _, pid := range pids {
		if alive(pid) {
			out = append(out, fmt.Sprintf("pid %d: %s", pid, cmdline(pid)))
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cl := cmdline(pid); strings.Contains(cl, dir) && alive(pid) {
			out = append(out, fmt.Sprintf("pid %d mentions %s: %s", pid, dir, cl))
		}
	}
	return out
}

// alive reports whether pid is a live process. A zombie (exited, not yet
// reaped by whoever inherited it) counts as gone: it runs nothing and holds
// nothing but its PID.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// memoryKB returns a process's resident and proportional set sizes in KiB
// (0 if unknown). PSS divides pages shared between processes (the text of a
// binary run once per cluster) among them, so it adds up to the real total.
func memoryKB(pid int) (rss, pss int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		field, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		switch field {
		case "Rss":
			rss = kb
		case "Pss":
			pss = kb
		}
	}
	return rss, pss
}
