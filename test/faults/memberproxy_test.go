package faults_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/internal/protocol"
	"github.com/tetherproj/tether/test/kit"
)

// TestMemberProxyUnderNAT: with the hub in its namespace, unable to route
// to any agent, and every agent behind the router's NAT, stock kubectl
// reaches a member through the hub's member proxy (get, logs, exec with
// stdin, port-forward), the hub's namespace opens no connection all the
// while (dial-outs 0), and a partition of that agent in the middle of an
// exec ends the session with an error within the keepalive time.
func TestMemberProxyUnderNAT(t *testing.T) {
	if selected() < full {
		t.Skipf("beyond the smoke subset: %s=full or all (make faults) runs it", SuiteEnv)
	}
	x := newFixture(t, setup{kubelet: true})
	proxyAddr := x.net.ProxyListen()
	kubectl, err := kit.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.LoadConfig(x.fleet.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	data, err := admin.Kubeconfig(proxyAddr, "edge-1")
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(kc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	member := x.fleet.Kit.Cluster("edge-1")
	run := func(cfg string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", cfg}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(member.KubeconfigPath, "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin"); err != nil {
		t.Fatalf("bind tether:role:admin: %v: %s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := run(kc, "get", "pods", "-o", "name")
		if err == nil && strings.Contains(out, "pod/nginx") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl get pods through the hub: %v: %s; want the examples' nginx pod", err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	pods, _ := run(kc, "get", "pods", "-o", "name")
	pod := strings.TrimPrefix(strings.Fields(pods)[0], "pod/")
	if err := member.AppendLog("through the NAT"); err != nil {
		t.Fatal(err)
	}
	if out, err := run(kc, "logs", pod); err != nil || !strings.Contains(out, "through the NAT") {
		t.Errorf("kubectl logs through the hub = %q, %v", out, err)
	}
	if out, err := run(kc, "exec", pod, "--", "echo", "exec ok"); err != nil || strings.TrimSpace(out) != "exec ok" {
		t.Errorf("kubectl exec through the hub = %q, %v", out, err)
	}
	portForwardEcho(t, kubectl, kc, pod)
	dials, err := x.net.HubDialOuts()
	if err != nil || dials != 0 {
		t.Errorf("hub dial-outs after proxying = %d, %v; want 0", dials, err)
	}
	t.Logf("FIGURES %s: hub_dial_outs=%d", t.Name(), dials)
	partitionMidExec(t, x, kubectl, kc, pod)
}

// portForwardEcho sends a line through kubectl port-forward (kwok echoes).
func portForwardEcho(t *testing.T, kubectl, kc, pod string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	local := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(local)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kc, "port-forward", "pod/"+pod, port+":80")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var conn net.Conn
	for deadline := time.Now().Add(30 * time.Second); ; {
		if conn, err = net.Dial("tcp", local); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port-forward never opened %s: %v", local, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(conn, "ping\n")
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "ping\n" {
		t.Errorf("port-forward echo through the hub = %q, %v", line, err)
	}
}

// partitionMidExec cuts edge-1's agent off in the middle of an exec: the
// session ends with an error within the keepalive time.
func partitionMidExec(t *testing.T, x *fixture, kubectl, kc, pod string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kc, "exec", "-i", pod, "--", "cat")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "alive\n")
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "alive\n" {
		t.Fatalf("exec echo before the partition = %q, %v", line, err)
	}
	if err := x.net.Partition("edge-1"); err != nil {
		t.Fatal(err)
	}
	defer x.net.Heal("edge-1")
	cut := time.Now()
	err := cmd.Wait()
	took := time.Since(cut)
	limit := protocol.KeepaliveTime + protocol.KeepaliveTimeout + 15*time.Second
	t.Logf("FIGURES %s: exec_end_after_partition=%s", t.Name(), took.Round(time.Second))
	if err == nil || took > limit {
		t.Errorf("exec through a partitioned agent ended after %s with %v; want an error within %s", took.Round(time.Second), err, limit)
	}
}
