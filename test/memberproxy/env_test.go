package memberproxy_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
)

// env is a fleet whose hub serves the member proxy, and kubectl.
type env struct {
	f         *fleet.Fleet
	kubectl   string
	proxyAddr string
	admin     client.Config
	dir       string
}

// start starts a fleet of clusters with the member proxy on; agentArgs go
// to every agent.
func start(t testing.TB, clusters []string, agentArgs ...string) *env {
	t.Helper()
	return startWith(t, clusters, false, agentArgs...)
}

// startWith is start, with kwok serving the kubelet API (logs, exec,
// port-forward) when kubelet is set.
func startWith(t testing.TB, clusters []string, kubelet bool, agentArgs ...string) *env {
	t.Helper()
	return startOpts(t, clusters, kubelet, func(o *fleet.Options) { o.AgentArgs = agentArgs })
}

// startOpts is startWith, with the fleet's options changed by edit.
func startOpts(t testing.TB, clusters []string, kubelet bool, edit func(*fleet.Options)) *env {
	t.Helper()
	kubectl, err := kit.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var specs []kit.ClusterSpec
	for _, c := range clusters {
		specs = append(specs, kit.ClusterSpec{Name: c, KubeletServer: kubelet})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	opts := fleet.Options{Clusters: specs, Dir: dir, BinDir: binDir, HubArgs: []string{"--proxy-listen", addr}}
	edit(&opts)
	f, err := fleet.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	t.Cleanup(f.Stop)
	admin, err := client.LoadConfig(f.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &env{f: f, kubectl: kubectl, proxyAddr: addr, admin: admin, dir: dir}
}

// freeAddr returns a 127.0.0.1 address with a port free now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// kubeconfig writes the hub kubeconfig of cfg's user for clusters, as
// `tetherctl kubeconfig` does, and returns its path.
func (e *env) kubeconfig(t testing.TB, name string, cfg client.Config, clusters ...string) string {
	t.Helper()
	data, err := cfg.Kubeconfig(e.proxyAddr, clusters...)
	if err != nil {
		t.Fatalf("Kubeconfig: %v", err)
	}
	path := filepath.Join(e.dir, name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// member is the admin kubeconfig of a member cluster, for direct access.
func (e *env) member(cluster string) string {
	return filepath.Join(e.dir, "clusters", cluster, "kubeconfig")
}

// run runs kubectl with kubeconfig and args; it returns stdout, and
// stderr in the error.
func (e *env) run(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// must runs kubectl and fails the test on error.
func (e *env) must(t testing.TB, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.run(ctx, kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refused runs kubectl, expects it to fail, and returns its error text.
func (e *env) refused(t testing.TB, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.run(ctx, kubeconfig, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded (%q); want it refused", strings.Join(args, " "), out)
	}
	return err.Error()
}

// waitProxy waits until the cluster's agent serves the proxy (its Listen
// stream is up): /version through the hub answers.
func (e *env) waitProxy(t testing.TB, kubeconfig string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := e.run(ctx, kubeconfig, "get", "--raw", "/version")
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy did not answer within 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
