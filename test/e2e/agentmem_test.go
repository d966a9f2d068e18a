package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/tier"
)

// Parameters of TestAgentMemory: one member's share of issue 16's baseline
// workload (100 Deployments × 3 replicas on 5 kwok nodes of 32 CPU / 256Gi
// / 110 pods), created, updated to a new image and deleted.
const (
	memDeployments = 100
	memReplicas    = 3
	memNodes       = 5
	// agentPeakBudgetKB bounds the agent's peak resident set (VmHWM, kB)
	// over the whole workload. Measured with the binaries built as make
	// builds them (CGO_ENABLED=0): 60–63 MB before issue 16's memory work
	// (client-go's typed clientset, discovery and informers), 38.8–38.9 MB
	// after it, of which some 25 MB are the binary's own pages; issue 16's
	// goal is 40 MB. The budget leaves the new agent 5 MB for noise (GC
	// timing, a cgo build's libc) and fails the old one by 16 MB.
	agentPeakBudgetKB = 44 * 1000
)

// TestAgentMemory runs one real agent over one member's share of the
// baseline workload (create, image update, delete, each until the member
// and the hub's aggregated status show it) and fails when the agent's peak
// RSS exceeds agentPeakBudgetKB. It logs the idle RSS after the start and
// the peak, with the anonymous and file-backed split. With
// TETHER_E2E_AGENT_PROFILES=DIR the agent serves --pprof-addr, and its heap
// profiles after each phase and its log are written to DIR.
func TestAgentMemory(t *testing.T) {
	tier.Long(t, "runs a member's share of the baseline workload")
	specs := kit.Members(1)
	for n := range memNodes {
		specs[0].Nodes = append(specs[0].Nodes, kit.NodeSpec{Name: fmt.Sprintf("node-%d", n+1), CPU: "32", Memory: "256Gi", Pods: "110"})
	}
	env := kit.StartT(t, kit.Options{Clusters: specs})
	c := env.Clusters[0]
	f := &fixture{t: t, env: env, dataDir: t.TempDir()}
	f.hub = startHub(t, t, f.dataDir, "127.0.0.1:0")
	f.admin = dialAdmin(t, f.hub)
	a := newAgent(t, t, f.hub, c)
	// Info, as deployed and as the benchmark runs it.
	args := []string{"--hub", a.hubAddr,
		"--cert", filepath.Join(a.certs, "tls.crt"), "--key", filepath.Join(a.certs, "tls.key"),
		"--ca", filepath.Join(a.certs, "ca.crt"), "--kubeconfig", c.KubeconfigPath, "--data-dir", a.dataDir}
	profiles := os.Getenv("TETHER_E2E_AGENT_PROFILES")
	if profiles != "" {
		args = append(args, "--pprof-addr", "127.0.0.1:0")
	}
	a.proc = startProc(t, t, "tether-agent-"+c.Name, agentBin, args...)
	f.hub.waitMetric(t, memberWait, `tether_hub_clusters{state="Ready"}`, 1)
	t.Logf("agent idle after start: %s, %s", memStatus(t, a.pid()), memSplit(t, a.pid()))
	saveHeap(t, a.proc, profiles, "idle")

	ctx := ctxFor(t)
	f.admin.apply(ctx, duplicatedPolicyYAML("mem", "bench", "mem", c.Name))
	for _, image := range []string{"nginx:1.25", "nginx:1.27"} {
		var docs strings.Builder
		for i := range memDeployments {
			docs.WriteString(deploymentYAML(memName(i), image, memReplicas, "bench", "mem"))
		}
		f.admin.apply(ctx, docs.String())
		waitMemberRolledOut(t, c, image)
		waitAggregatedReady(t, f.admin)
		t.Logf("agent after %s: %s", image, memStatus(t, a.pid()))
		saveHeap(t, a.proc, profiles, image)
	}
	for i := range memDeployments {
		ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: memName(i)}
		if _, err := f.admin.objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil {
			t.Fatalf("Delete(%s): %v", ref.GetName(), err)
		}
	}
	poll(t, measureWait, c.Name+": every Deployment gone", func() (bool, string) {
		n, err := countDeployments(ctx, c)
		return err == nil && n == 0, fmt.Sprintf("%d left (%v)", n, err)
	})
	peak := statusKB(t, a.pid(), "VmHWM:")
	if profiles != "" {
		if err := os.WriteFile(filepath.Join(profiles, "agent.log"), []byte(a.logText()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("agent after delete: %s, %s", memStatus(t, a.pid()), memSplit(t, a.pid()))
	if peak > agentPeakBudgetKB {
		t.Errorf("agent peak RSS (VmHWM) = %d kB; want ≤ %d kB", peak, agentPeakBudgetKB)
	}
}

// saveHeap writes the agent's heap profile to dir/heap-<name>.pb.gz when
// dir is set (TETHER_E2E_AGENT_PROFILES: the agent serves --pprof-addr).
func saveHeap(t *testing.T, p *proc, dir, name string) {
	t.Helper()
	if dir == "" {
		return
	}
	m := regexp.MustCompile(`serving profiles: addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("the agent's log names no profile address:\n%s", p.tail(20))
	}
	resp, err := http.Get("http://" + m[1] + "/debug/pprof/heap")
	if err != nil {
		t.Fatalf("heap profile: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("heap profile: %v", err)
	}
	path := filepath.Join(dir, "heap-"+strings.ReplaceAll(name, ":", "-")+".pb.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap profile: %s", path)
}

func memName(i int) string { return fmt.Sprintf("mem-%03d", i) }

// waitMemberRolledOut polls the member until every Deployment of the
// workload runs image with all replicas updated and ready.
func waitMemberRolledOut(t *testing.T, c *kit.Cluster, image string) {
	t.Helper()
	poll(t, measureWait, fmt.Sprintf("%s: every Deployment rolled out with %s", c.Name, image), func() (bool, string) {
		list, err := c.Clientset().AppsV1().Deployments("default").List(context.Background(), metav1.ListOptions{LabelSelector: "bench=mem"})
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for _, d := range list.Items {
			s := d.Status
			if d.Spec.Template.Spec.Containers[0].Image == image && s.ObservedGeneration == d.Generation &&
				s.UpdatedReplicas == memReplicas && s.ReadyReplicas == memReplicas && s.Replicas == memReplicas {
				done++
			}
		}
		return done == memDeployments, fmt.Sprintf("%d of %d", done, memDeployments)
	})
}

// waitAggregatedReady polls the hub until every template of the workload
// shows the member's ready replicas and the member's updated ones.
func waitAggregatedReady(t *testing.T, a *admin) {
	t.Helper()
	poll(t, measureWait, "hub: every template aggregated rolled out", func() (bool, string) {
		resp, err := a.objects.List(context.Background(), &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment",
			Namespace: "default", LabelSelector: "bench=mem", PageSize: 500})
		if err != nil {
			return false, err.Error()
		}
		done := 0
		for _, o := range resp.GetObjects() {
			s := string(o.GetObjectJson())
			if strings.Contains(s, fmt.Sprintf(`"readyReplicas":%d`, memReplicas)) &&
				strings.Contains(s, fmt.Sprintf(`"updatedReplicas":%d`, memReplicas)) {
				done++
			}
		}
		return done == memDeployments, fmt.Sprintf("%d of %d", done, memDeployments)
	})
}

// countDeployments counts the workload's Deployments in c.
func countDeployments(ctx context.Context, c *kit.Cluster) (int, error) {
	list, err := c.Clientset().AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "bench=mem"})
	if err != nil {
		return 0, err
	}
	return len(list.Items), nil
}

// statusKB is one "key: N kB" line of /proc/PID/status, in kB.
func statusKB(t *testing.T, pid int, key string) int {
	t.Helper()
	f := strings.Fields(statusLines(t, pid, key))
	if len(f) < 2 {
		t.Fatalf("no %s in /proc/%d/status", key, pid)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("/proc/%d/status %s: %v", pid, key, err)
	}
	return n
}
