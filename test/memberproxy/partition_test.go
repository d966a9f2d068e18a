package memberproxy_test

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/protocol"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/tier"
)

// TestPartitionMidExec: an exec session through the hub whose agent stops
// answering (SIGSTOP: no FIN, no keepalive reply, as behind a cut NAT)
// ends with an error within the connection's keepalive time
// (protocol.KeepaliveTime + KeepaliveTimeout); once the agent runs again,
// its tunnel goroutines are gone too.
func TestPartitionMidExec(t *testing.T) {
	tier.Long(t, "waits out the keepalive of a silent agent (about 40 s)")
	agentPprof := freeAddr(t)
	e := startOpts(t, []string{"edge-1"}, true, func(o *fleet.Options) { o.AgentArgs = []string{"--pprof-addr=" + agentPprof} })
	admin := e.kubeconfig(t, "admin", e.admin, "edge-1")
	e.waitProxy(t, admin)
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	e.runPod(t, admin, "web")
	baseline := goroutines(t, agentPprof)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", admin, "exec", "-i", "web", "--", "cat")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "alive\n")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "alive\n" {
		t.Fatalf("exec echo before the partition = %q, %v", line, err)
	}
	if err := e.f.Signal(fleet.RoleAgent, "edge-1", syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	err := cmd.Wait()
	took := time.Since(cut)
	if err := e.f.Signal(fleet.RoleAgent, "edge-1", syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	limit := protocol.KeepaliveTime + protocol.KeepaliveTimeout + 15*time.Second
	if err == nil || took > limit {
		t.Errorf("exec through a silent agent ended after %s with %v; want an error within %s", took.Round(time.Second), err, limit)
	}
	t.Logf("exec ended %s after the agent went silent: %v: %s", took.Round(time.Second), err, strings.TrimSpace(stderr.String()))
	settled(t, "agent", agentPprof, baseline)
	e.waitProxy(t, admin) // the agent listens again: the proxy works
}
