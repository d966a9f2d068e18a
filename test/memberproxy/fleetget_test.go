package memberproxy_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/fleet"
)

// TestFleetGet: `tetherctl get pods -A --clusters all` prints one table
// with a CLUSTER column over every member; a cluster whose agent is gone
// keeps a row saying it is unreachable and when it was last heard from.
func TestFleetGet(t *testing.T) {
	e := start(t, []string{"edge-1", "edge-2"})
	for _, c := range []string{"edge-1", "edge-2"} {
		e.must(t, e.member(c), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
		kc := e.kubeconfig(t, "admin-"+c, e.admin, c)
		e.waitProxy(t, kc)
		e.must(t, kc, "run", "web-"+c, "--image=nginx", "--restart=Never")
	}
	out := e.tetherctl(t, "get", "pods", "-A", "--clusters", "all", "--proxy", e.proxyAddr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Fields(lines[0]); len(f) < 3 || f[0] != "CLUSTER" || f[1] != "NAMESPACE" || f[2] != "NAME" {
		t.Errorf("get pods -A --clusters all header = %q; want CLUSTER NAMESPACE NAME ...", lines[0])
	}
	for _, want := range []string{"edge-1 default web-edge-1", "edge-2 default web-edge-2"} {
		if !containsRow(lines, want) {
			t.Errorf("get pods -A --clusters all:\n%s\nwant a row starting %q", out, want)
		}
	}
	if nodes := e.tetherctl(t, "get", "nodes", "--clusters", "edge-1,edge-2", "--proxy", e.proxyAddr); !containsRow(strings.Split(nodes, "\n"), "edge-2 node-1") {
		t.Errorf("get nodes --clusters edge-1,edge-2:\n%s\nwant edge-2's node-1", nodes)
	}

	if err := e.f.Kill(fleet.RoleAgent, "edge-2"); err != nil {
		t.Fatal(err)
	}
	out = e.tetherctl(t, "get", "pods", "-A", "--clusters", "all", "--proxy", e.proxyAddr)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if !containsRow(lines, "edge-1 default web-edge-1") || !containsRow(lines, "edge-2 <unreachable:") || !strings.Contains(out, "last heartbeat") {
		t.Errorf("get pods with edge-2's agent gone:\n%s\nwant edge-1's rows and edge-2 marked unreachable with its last heartbeat", out)
	}
}

// containsRow reports whether a line starts with the fields of want.
func containsRow(lines []string, want string) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.Join(strings.Fields(l), " "), want) {
			return true
		}
	}
	return false
}

// tetherctl runs the tetherctl of binDir as the hub's admin.
func (e *env) tetherctl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "tetherctl"), append([]string{"--config", e.f.AdminConfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tetherctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
