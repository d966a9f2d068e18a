package agent_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/agent"
	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/test/kit"
)

// pollEvery is how often a wait looks again.
const pollEvery = 50 * time.Millisecond

// TestObservability runs an agent against a kit member and a test hub:
// /readyz answers 503 until the hub's SyncDone, 200 after, and 503 again
// once the member API server is gone, while /healthz stays 200; /metrics
// shows the stream's state, the works held, an apply, a failed apply, a
// deletion and the status reports' lag; the failed apply is an Event in
// the member.
func TestObservability(t *testing.T) {
	env := kit.StartT(t, kit.Options{Clusters: kit.Members(1)})
	member := env.Clusters[0]
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	cfg := config(certs, hub.Addr, t.TempDir(), nil)
	cfg.Kubeconfig = member.KubeconfigPath
	cfg.MetricsAddr, cfg.HealthAddr = freeAddr(t), freeAddr(t)
	cfg.MemberCheckEvery = 100 * time.Millisecond
	a, err := agent.New(cfg, kit.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { // before the kit stops (cleanups run last first)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v; want nil after cancel", err)
		}
	})
	health := "http://" + cfg.HealthAddr

	waitFor(t, "/readyz 503 before SyncDone", func() error { return wantStatus(health+"/readyz", 503, "not synced") })
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome("hub-a", time.Second), hubtest.Upsert("ok", "v1"), refused("bad", "v1"), hubtest.SyncDone(2))
	waitFor(t, "/readyz 200 after SyncDone", func() error { return wantStatus(health+"/readyz", 200, "ok") })
	waitFor(t, "ApplyFailed event", func() error { return applyFailedEvent(member, "bad") })
	s.Send(t, hubtest.Delete("ok", agentv1.DeletionPolicy_DELETION_POLICY_DELETE))

	metrics := "http://" + cfg.MetricsAddr + "/metrics"
	for _, want := range []string{
		`tether_agent_stream_state{state="synced"} 1`,
		`tether_agent_stream_state{state="disconnected"} 0`,
		`tether_agent_works_held 1`,
		`tether_agent_work_applies_total{result="applied"} `,
		`tether_agent_work_applies_total{result="failed"} `,
		`tether_agent_work_apply_duration_seconds_count `,
		`tether_agent_work_deletions_total{reason="placement_changed"} 1`,
		`tether_agent_member_deletes_total{reason="placement_changed"} 1`,
		`tether_agent_status_report_lag_seconds_count `,
		`tether_agent_last_sync_timestamp_seconds `,
	} {
		waitFor(t, "metric "+want, func() error { return wantMetric(metrics, want) })
	}

	member.StopAPIServer()
	waitFor(t, "/readyz 503 without the member API server", func() error {
		return wantStatus(health+"/readyz", 503, "member API server")
	})
	if err := wantStatus(health+"/healthz", 200, "ok"); err != nil {
		t.Errorf("/healthz without the member API server: %v; want 200: the agent is alive", err)
	}
}

// refused is a WorkUpsert of key whose ConfigMap the member API server
// refuses (a data key with a space).
func refused(key, version string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: &agentv1.WorkUpsert{
		WorkKey: key, Version: version,
		Manifests: [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + key + `","namespace":"default"},"data":{"bad key":"x"}}`)},
		Binding:   &agentv1.BindingReference{Namespace: "default", Name: key, Uid: "uid-" + key},
	}}}
}

// applyFailedEvent finds the agent's ApplyFailed Event about ConfigMap
// name in default.
func applyFailedEvent(member *kit.Cluster, name string) error {
	evs, err := member.Clientset().CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, e := range evs.Items {
		if e.Reason == apply.ReasonApplyFailed && e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.Name == name && e.Type == "Warning" {
			return nil
		}
	}
	return fmt.Errorf("no ApplyFailed event for %s among %d", name, len(evs.Items))
}

// freeAddr is a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// get returns url's status and body.
func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// wantStatus returns nil when url answers code with a body containing
// text.
func wantStatus(url string, code int, text string) error {
	got, body, err := get(url)
	if err != nil {
		return err
	}
	if got != code || !strings.Contains(body, text) {
		return fmt.Errorf("GET %s = %d %q; want %d with %q", url, got, body, code, text)
	}
	return nil
}

// wantMetric returns nil when the exposition at url has a line starting
// with prefix.
func wantMetric(url, prefix string) error {
	_, body, err := get(url)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			return nil
		}
	}
	return fmt.Errorf("no line %q in /metrics", prefix)
}

// waitFor polls cond until it returns nil, or fails the test at
// hubtest.Timeout with its last error.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(hubtest.Timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(pollEvery)
	}
}
