package memberproxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLogsExecPortForwardThroughHub runs kubectl logs -f, exec (stdin to
// stdout) and port-forward through the hub against a kwok pod: the API
// server's real kubelet path, kwok serving the kubelet API.
func TestLogsExecPortForwardThroughHub(t *testing.T) {
	e := startStreaming(t, "edge-1")
	hub := e.kubeconfig(t, "admin", e.admin, "edge-1")
	e.waitProxy(t, hub)
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	e.runPod(t, hub, "web")

	t.Run("logs -f", func(t *testing.T) { e.followLogs(t, hub, "edge-1", "web") })
	t.Run("exec", func(t *testing.T) {
		msg := "hello through the hub\n"
		out := e.mustIn(t, hub, msg, "exec", "-i", "web", "--", "head", "-c", strconv.Itoa(len(msg)))
		if out != msg {
			t.Errorf("exec -i web -- head = %q; want the stdin back, %q", out, msg)
		}
	})
	t.Run("port-forward", func(t *testing.T) { e.portForward(t, hub, "web") })
}

// startStreaming starts a fleet whose clusters serve the kubelet API.
func startStreaming(t testing.TB, clusters ...string) *env {
	return startWith(t, clusters, true)
}

// runPod creates a pod and waits until it runs (kwok makes it Running).
func (e *env) runPod(t testing.TB, kubeconfig, name string) {
	t.Helper()
	e.must(t, kubeconfig, "run", name, "--image=nginx", "--restart=Never")
	e.must(t, kubeconfig, "wait", "--for=condition=Ready", "pod/"+name, "--timeout=60s")
}

// mustIn runs kubectl with stdin.
func (e *env) mustIn(t testing.TB, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderrOf(err))
	}
	return string(out)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// followLogs starts kubectl logs -f and checks that a line appended to the
// pod's log file arrives.
func (e *env) followLogs(t *testing.T, kubeconfig, cluster, pod string) {
	member := e.f.Kit.Cluster(cluster)
	if err := member.AppendLog("first line"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", kubeconfig, "logs", "-f", pod)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	want := func(line string) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("logs -f ended before %q: %v %s", line, lines.Err(), stderr.String())
		}
		if lines.Text() != line {
			t.Fatalf("logs -f line = %q; want %q", lines.Text(), line)
		}
	}
	want("first line")
	if err := member.AppendLog("appended later"); err != nil {
		t.Fatal(err)
	}
	want("appended later")
}

// portForward runs kubectl port-forward and sends bytes through it; kwok's
// forward echoes them.
func (e *env) portForward(t *testing.T, kubeconfig, pod string) {
	local := freeAddr(t)
	_, port, _ := net.SplitHostPort(local)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", kubeconfig, "port-forward", "pod/"+pod, port+":8080")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var conn net.Conn
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		if conn, err = net.Dial("tcp", local); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port-forward's local port %s never opened: %v", local, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	msg := "ping through the hub\n"
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != msg {
		t.Fatalf("port-forward echo = %q, %v; want %q", got, err, msg)
	}
}
