package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/tetherproj/tether/internal/clientconfig"
)

// TestAdminConfWorks: a first start writes admin.conf naming the actual
// address; its credentials pass mTLS; the one port serves health,
// reflection, the agent and the client services; a graceful stop exits 0
// and a restart leaves admin.conf as it was.
func TestAdminConfWorks(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir, "--metrics-listen", "127.0.0.1:0")
	checkMetrics(t, h)
	path := filepath.Join(dir, "admin.conf")
	cfg, err := clientconfig.Load(path)
	if err != nil {
		t.Fatalf("admin.conf: %v", err)
	}
	if cfg.Server != h.addr || cfg.User != "admin" {
		t.Errorf("admin.conf server, user = %q, %q; want %q, admin", cfg.Server, cfg.User, h.addr)
	}
	a := dialAdmin(t, dir, cfg.Server)
	ctx, cancel := context.WithTimeout(ctxFor(t), rpcTimeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(a.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Check = %v, %v; want SERVING", resp, err)
	}
	services := listServices(ctx, t, a)
	for _, want := range []string{"tether.agent.v1.AgentService", "tether.hub.v1.ObjectService", "tether.hub.v1.PlacementService", "grpc.health.v1.Health"} {
		if !slices.Contains(services, want) {
			t.Errorf("reflection lists %v; want %s among them", services, want)
		}
	}

	before, _ := os.ReadFile(path)
	h.kill()
	if code := h.exitCode(); code != 0 {
		t.Errorf("exit code after SIGTERM = %d; want 0", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "hub.addr")); !os.IsNotExist(err) {
		t.Errorf("hub.addr after a graceful stop: %v; want it removed", err)
	}
	h2 := startHub(t, dir)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("admin.conf changed across a restart; it must never be overwritten")
	}
	if !h2.logContains("admin.conf names another address") {
		t.Errorf("restart on a new port logged no warning about admin.conf's stale address")
	}
}

// checkMetrics reads the metrics address from the log and checks /readyz
// and /metrics.
func checkMetrics(t *testing.T, h *hubProc) {
	t.Helper()
	data, _ := os.ReadFile(h.log)
	m := regexp.MustCompile(`serving metrics: address=(\S+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("the log names no metrics address")
	}
	for path, want := range map[string]string{"/readyz": "ok", "/healthz": "ok", "/metrics": "tether_hub_agent_streams 0"} {
		resp, err := http.Get("http://" + string(m[1]) + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d %.200q; want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
}

func listServices(ctx context.Context, t *testing.T, a *admin) []string {
	t.Helper()
	rc, err := reflectionpb.NewServerReflectionClient(a.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	defer rc.CloseSend()
	req := &reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}
	if err := rc.Send(req); err != nil {
		t.Fatalf("reflection send: %v", err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatalf("reflection recv: %v", err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	return names
}

// TestRefusals: an invalid policy is refused naming the field, an object
// over 1.5 MiB is refused saying so, and an unknown custom kind is accepted
// and bound without replicas.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)

	t.Run("invalid policy", func(t *testing.T) {
		resp, err := a.apply(ctx, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Sometimes}
`)
		const field = "spec.placement.replicaScheduling.replicaSchedulingType"
		if err != nil {
			if !strings.Contains(err.Error(), field) {
				t.Fatalf("Apply error = %v; want it to name %s", err, field)
			}
			return
		}
		if resp.GetCommitted() || len(resp.GetResults()) != 1 {
			t.Fatalf("Apply = %v; want one rejected result, nothing committed", resp)
		}
		var fields []string
		for _, fe := range resp.GetResults()[0].GetFieldErrors() {
			fields = append(fields, fe.GetField())
		}
		if !slices.Contains(fields, field) {
			t.Errorf("field errors name %v; want %s", fields, field)
		}
	})

	t.Run("object over 1.5 MiB", func(t *testing.T) {
		big := strings.Repeat("x", 1600<<10)
		resp, err := a.apply(ctx, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"default"},"data":{"blob":"`+big+`"}}`)
		var msg string
		switch {
		case err != nil:
			msg = err.Error()
		case resp.GetCommitted():
			t.Fatalf("Apply of a 1.6 MiB ConfigMap committed it")
		default:
			msg = resp.GetResults()[0].GetMessage()
		}
		if !strings.Contains(msg, "too large") || !strings.Contains(msg, "1.5") {
			t.Errorf("refusal says %q; want it to say too large and the 1.5 MiB limit", msg)
		}
	})

	t.Run("unknown custom kind", func(t *testing.T) {
		agent := mintAgent(t, dir, "member-x")
		s, err := agent.connect(ctx, h.addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		if err := s.heartbeat(); err != nil {
			t.Fatal(err)
		}
		a.mustApply(ctx, `apiVersion: widgets.example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: default}
spec:
  resourceSelectors: [{apiVersion: widgets.example.com/v1, kind: Widget}]
  placement:
    clusterAffinity: {clusterNames: [member-x]}
`)
		ref := deployment("w1")
		ref.ApiVersion, ref.Kind = "widgets.example.com/v1", "Widget"
		poll(t, 30*time.Second, "Widget w1 bound to member-x", func() (bool, string) {
			p, err := a.placement(ctx, ref)
			if err != nil {
				return false, err.Error()
			}
			cs := p.GetClusters()
			return len(cs) == 1 && cs[0].GetCluster() == "member-x" && cs[0].GetReplicas() == 0, p.String()
		})
		msg, err := s.next(30 * time.Second)
		if err != nil || !bytes.Contains(bytes.Join(msg.GetWorkUpsert().GetManifests(), nil), []byte(`"Widget"`)) {
			t.Errorf("member-x got %v, %v; want the Widget's work", msg, err)
		}
	})
}
