package memberproxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/tier"
)

// logBytes is the size of the log streamed through the hub (200 MB).
const logBytes = 200 << 20

// TestBigLogStreamIsolation: while `kubectl logs` streams 200 MB through
// the hub (read at about 10 MB/s, so that it spans the applies), works
// still reach the member in about their usual time and the cluster's
// lease never lapses: the stream rides its own gRPC stream on the agent's
// second connection, never the works stream.
func TestBigLogStreamIsolation(t *testing.T) {
	tier.Long(t, "streams 200 MB through the hub while works apply")
	e := startStreaming(t, "edge-1")
	admin := e.kubeconfig(t, "admin", e.admin, "edge-1")
	e.waitProxy(t, admin)
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	e.runPod(t, admin, "web")
	want := writeBigLog(t, e.f.Kit.Cluster("edge-1").LogsPath())
	hub, err := e.f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	base := applyAndWait(t, hub, "base")

	var got atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", admin, "logs", "web")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	streamed := make(chan error, 1)
	go func() { streamed <- readSlowly(stdout, &got, 10<<20) }()
	lapses := watchLease(ctx, t, hub, "edge-1")

	for i := range 3 {
		took := applyAndWait(t, hub, fmt.Sprintf("during-%d", i))
		if limit := 2*base + 5*time.Second; took > limit {
			t.Errorf("work %d applied in %s during the log stream; usual %s, want at most %s", i, took, base, limit)
		}
		t.Logf("work %d: %s during the stream (%d MB streamed so far), %s before it", i, took.Round(time.Millisecond), got.Load()>>20, base.Round(time.Millisecond))
	}
	if got.Load() >= want {
		t.Errorf("the stream had ended (%d MB) before the works applied: the test proved nothing", got.Load()>>20)
	}
	if err := <-streamed; err != nil {
		t.Fatalf("log stream: %v", err)
	}
	if err := cmd.Wait(); err != nil || got.Load() != want {
		t.Errorf("kubectl logs: %v, %d bytes; want %d", err, got.Load(), want)
	}
	cancel()
	if n := <-lapses; n != 0 {
		t.Errorf("the cluster's lease was not READY %d times during the stream; want never", n)
	}
}

// writeBigLog writes logBytes of log lines (in kwok's CRI format) and
// returns how many bytes kubectl logs prints for them.
func writeBigLog(t *testing.T, path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := strings.Repeat("x", 1000)
	var printed int64
	for printed < logBytes {
		fmt.Fprintf(w, "2026-01-01T00:00:00.000000000Z stdout F %s\n", line)
		printed += int64(len(line) + 1)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return printed
}

// readSlowly reads r to its end at about perSecond bytes per second.
func readSlowly(r io.Reader, n *atomic.Int64, perSecond int) error {
	buf := make([]byte, 64<<10)
	start := time.Now()
	for {
		k, err := r.Read(buf)
		n.Add(int64(k))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if ahead := time.Duration(n.Load())*time.Second/time.Duration(perSecond) - time.Since(start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
}

// applyAndWait applies a one-replica Deployment to every cluster and
// returns how long until the hub reports it rolled out.
func applyAndWait(t *testing.T, hub *fleet.Client, name string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	_, err := hub.Apply(ctx, []byte(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [edge-1]}}
`, name)))
	if err != nil {
		t.Fatalf("apply %s: %v", name, err)
	}
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
	if err := hub.WaitTemplate(ctx, ref, fleet.Rolled); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// watchLease polls the cluster's state every 500 ms until ctx ends and
// then sends how many polls found it not READY.
func watchLease(ctx context.Context, t *testing.T, hub *fleet.Client, cluster string) <-chan int {
	out := make(chan int, 1)
	go func() {
		lapses := 0
		for ctx.Err() == nil {
			list, err := hub.ListClusters(ctx, client.ClusterSelector{})
			for _, c := range list {
				if err == nil && c.GetName() == cluster && c.GetState() != hubv1.ClusterState_CLUSTER_STATE_READY {
					lapses++
					t.Logf("cluster %s %s, lease age %s", cluster, c.GetState(), c.GetLeaseAge().AsDuration())
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
		out <- lapses
	}()
	return out
}
