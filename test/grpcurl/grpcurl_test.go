package grpcurl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// startTimeout bounds the hub's start-up (embedded etcd, CA, controllers)
// and each step's wait for an effect.
const startTimeout = 60 * time.Second

// stopGrace is how long the hub and the watch may take to stop after
// SIGTERM before they are killed.
const stopGrace = 20 * time.Second

// TestReadmeGrpcurl runs the README's grpcurl commands against a real hub
// holding examples/nginx.yaml: a viewer's PEM files, the services listed by
// reflection, GetPlacement of the nginx Deployment with its policy, and a
// WatchPlacement that shows the placement (ADDED), a change of the
// template (MODIFIED) and its deletion (DELETED), after which grpcurl
// exits 0.
func TestReadmeGrpcurl(t *testing.T) {
	blocks := readmeBlocks(t, "credentials", "address", "get", "watch")
	sh := newShell(t, startHub(t))
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "examples", "nginx.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sh.applyWhenReady(t, manifest)

	sh.run(t, blocks["credentials"])
	for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
		if _, err := os.Stat(filepath.Join(sh.dir, "dashboard", f)); err != nil {
			t.Fatalf("after the credentials block: %v", err)
		}
	}

	listed := sh.run(t, blocks["address"])
	for _, svc := range []string{"tether.hub.v1.PlacementService", "grpc.reflection.v1.ServerReflection"} {
		if !strings.Contains(listed, svc) {
			t.Errorf("grpcurl list = %q; want %s", listed, svc)
		}
	}

	// The policy claims the template shortly after the apply.
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err = proc.Poll(ctx, 100*time.Millisecond, func(context.Context) error {
		var got struct {
			Placement struct {
				Template, Policy struct{ Kind, Name string }
				Revision         string
			}
		}
		// The address block lists the services first; the placement follows.
		out := sh.run(t, blocks["address"]+blocks["get"])
		if err := json.Unmarshal([]byte(out[strings.Index(out, "\n{")+1:]), &got); err != nil {
			return proc.Permanent(fmt.Errorf("GetPlacement output %q: %w", out, err))
		}
		if got.Placement.Template.Name != "nginx" || got.Placement.Policy.Name != "nginx" || got.Placement.Revision == "" {
			return fmt.Errorf("GetPlacement = %s; want the nginx Deployment placed by policy nginx, with a revision", out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	watch := sh.start(t, blocks["address"]+blocks["watch"])
	sh.waitOutput(t, watch, "EVENT_TYPE_ADDED")
	sh.tetherctlIn(t, bytes.Replace(manifest, []byte("replicas: 7"), []byte("replicas: 9"), 1), "apply", "-f", "-")
	sh.waitOutput(t, watch, "EVENT_TYPE_MODIFIED")
	sh.tetherctlIn(t, nil, "delete", "deployment", "nginx", "-n", "default")
	sh.waitOutput(t, watch, "EVENT_TYPE_DELETED")
	select {
	case <-watch.Done():
	case <-time.After(startTimeout):
		t.Fatalf("WatchPlacement did not end after the template's deletion; output:\n%s", proc.FileTail(watch.LogPath(), 40))
	}
	if code := watch.ExitCode(); code != 0 {
		t.Errorf("the watch block exited %d; want 0 (the stream ends with the deletion); output:\n%s", code, proc.FileTail(watch.LogPath(), 40))
	}
}

// startHub starts tether-hub on a fresh data directory, listening on a
// free loopback port, waits until it wrote hub.addr and returns the data
// directory (which holds admin.conf). It is stopped at the end of the test.
func startHub(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, err := proc.Start(procs, proc.Config{Name: "tether-hub", Bin: filepath.Join(binDir, "tether-hub"),
		Args: []string{"--data-dir", dir, "--listen", "127.0.0.1:0"}, LogPath: filepath.Join(t.TempDir(), "hub.log")})
	if err != nil {
		t.Fatalf("start tether-hub: %v", err)
	}
	proc.StopAtEnd(t, p, stopGrace)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err = proc.Poll(ctx, 50*time.Millisecond, func(context.Context) error {
		if p.Exited() {
			return proc.Permanent(p.ExitError())
		}
		_, err := os.Stat(filepath.Join(dir, "hub.addr"))
		return err
	})
	if err != nil {
		t.Fatalf("tether-hub wrote no hub.addr: %v", err)
	}
	return dir
}

// shell runs README blocks with bash in a working directory of their own
// whose bin/ holds tetherctl, grpcurl on PATH, and TETHER_CONFIG naming
// the hub's admin.conf, as a user following the README has.
type shell struct {
	dir string
	env []string
}

func newShell(t *testing.T, hubDir string) *shell {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "tetherctl"), filepath.Join(dir, "bin", "tetherctl")); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + filepath.Dir(grpcurlBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir,
		"TETHER_CONFIG=" + filepath.Join(hubDir, "admin.conf"),
	}
	return &shell{dir: dir, env: env}
}

// run runs script with bash -eu, failing the test unless it exits 0, and
// returns its stdout.
func (s *shell) run(t *testing.T, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eu", "-c", script)
	cmd.Dir, cmd.Env = s.dir, s.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("README block:\n%s\nfailed: %v\nstdout: %s\nstderr: %s", script, err, out.String(), errOut.String())
	}
	return out.String()
}

// start starts script with bash in the background (its output in its
// log), stopped at the end of the test.
func (s *shell) start(t *testing.T, script string) *proc.Process {
	t.Helper()
	p, err := proc.Start(procs, proc.Config{Name: "README block", Bin: "/bin/bash",
		Args: []string{"-eu", "-c", "cd " + shellQuote(s.dir) + "\n" + script},
		Env:  s.env, LogPath: filepath.Join(t.TempDir(), "block.log")})
	if err != nil {
		t.Fatalf("start the README block: %v", err)
	}
	proc.StopAtEnd(t, p, stopGrace)
	return p
}

// waitOutput polls p's output until it holds want.
func (s *shell) waitOutput(t *testing.T, p *proc.Process, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err := proc.Poll(ctx, 50*time.Millisecond, func(context.Context) error {
		data, err := os.ReadFile(p.LogPath())
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(want)) {
			return nil
		}
		if p.Exited() {
			return proc.Permanent(fmt.Errorf("exited (%v) without printing %s", p.ExitError(), want))
		}
		return errors.New("not yet")
	})
	if err != nil {
		t.Fatalf("README block: %v; output:\n%s", err, proc.FileTail(p.LogPath(), 40))
	}
}

// tetherctlIn runs bin/tetherctl as the admin with stdin in, failing the
// test unless it exits 0.
func (s *shell) tetherctlIn(t *testing.T, in []byte, args ...string) {
	t.Helper()
	if err := s.tetherctl(in, args...); err != nil {
		t.Fatal(err)
	}
}

func (s *shell) tetherctl(in []byte, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.dir, "bin", "tetherctl"), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = s.dir, s.env, bytes.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tetherctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// applyWhenReady applies manifest as the admin, retrying until the hub
// serves the call.
func (s *shell) applyWhenReady(t *testing.T, manifest []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	err := proc.Poll(ctx, 200*time.Millisecond, func(context.Context) error {
		return s.tetherctl(manifest, "apply", "-f", "-")
	})
	if err != nil {
		t.Fatalf("apply examples/nginx.yaml: %v", err)
	}
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
