package agent_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherproj/tether/agent"
	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
	"github.com/tetherproj/tether/test/kit"
)

// TestRefusedWebhookNeverCalled runs an agent against a kit member and a
// test hub with --interpreter-webhook-hosts 127.0.0.1. The hub sends two
// webhook configurations for Deployments, each a real HTTPS server that
// counts its calls: "near" at 127.0.0.1 answers InterpretHealth, "far" at
// 127.0.0.2 InterpretStatus. The customizations' ack names far as refused
// by the flag; the Deployment's status report is Healthy (near was
// called) and its message says far's rule did not run because the agent
// refuses it; far is never called.
func TestRefusedWebhookNeverCalled(t *testing.T) {
	env := kit.StartT(t, kit.Options{Clusters: kit.Members(1)})
	certs := hubtest.NewCerts(t)
	near := startWebhook(t, "127.0.0.1:0", nil)
	far := startWebhook(t, "127.0.0.2:0", &tls.Config{Certificates: []tls.Certificate{certs.ServingFor(t, "127.0.0.2")}})
	caPEM, err := os.ReadFile(certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	cfg := config(certs, hub.Addr, t.TempDir(), nil)
	cfg.Kubeconfig = env.Clusters[0].KubeconfigPath
	cfg.Webhooks = customizations.WebhookPolicy{Hosts: []string{"127.0.0.1"}}
	cfg.WebhookAllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	runAgent(t, cfg)

	s := hub.Next(t)
	set := &agentv1.Customizations{Version: "c1", WebhookConfigurations: [][]byte{
		webhookConfig(t, "near", near.URL+"/health", near.caPEM(), "InterpretHealth"),
		webhookConfig(t, "far", far.URL+"/status", caPEM, "InterpretStatus"),
	}}
	s.Send(t, hubtest.Welcome("hub-a", time.Second), &agentv1.HubMessage{Message: &agentv1.HubMessage_Customizations{Customizations: set}},
		deploymentWork("web"), hubtest.SyncDone(1))

	ack := s.Recv(t, func(m *agentv1.AgentMessage) bool { return m.GetCustomizationsAck() != nil }).GetCustomizationsAck()
	if r := ack.GetRefused(); ack.GetVersion() != "c1" || len(r) != 1 || !strings.HasPrefix(r[0], "webhook configuration far: "+customizations.ErrWebhookRefused.Error()) ||
		!strings.Contains(r[0], `at host "127.0.0.2", not in --interpreter-webhook-hosts 127.0.0.1`) {
		t.Errorf("CustomizationsAck = %v; want c1 with far refused, naming its host and the flag", ack)
	}
	m := s.Recv(t, func(m *agentv1.AgentMessage) bool {
		r := m.GetStatusReport()
		return r.GetWorkKey() == "web" && len(r.GetManifests()) == 1 && strings.Contains(r.GetManifests()[0].GetMessage(), "refused")
	}).GetStatusReport().GetManifests()[0]
	if !strings.Contains(m.GetMessage(), "reflect status: webhook far/hook: "+customizations.ErrWebhookRefused.Error()) {
		t.Errorf("status message = %q; want the status rule refused, naming far", m.GetMessage())
	}
	if m.GetHealth() != agentv1.Health_HEALTH_HEALTHY || near.calls.Load() == 0 {
		t.Errorf("health = %s after %d calls of near; want Healthy from near", m.GetHealth(), near.calls.Load())
	}
	if n := far.calls.Load(); n != 0 {
		t.Errorf("calls of the refused webhook far = %d; want 0", n)
	}
}

// runAgent runs an agent with cfg until the test ends.
func runAgent(t *testing.T, cfg agent.Config) {
	t.Helper()
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
}

// countingWebhook is a real HTTPS interpreter webhook that counts its
// calls and answers healthy, with an empty status.
type countingWebhook struct {
	*httptest.Server
	calls atomic.Int64
}

// startWebhook serves a countingWebhook on addr, with tlsCfg (nil:
// httptest's certificate).
func startWebhook(t *testing.T, addr string, tlsCfg *tls.Config) *countingWebhook {
	t.Helper()
	w := &countingWebhook{}
	w.Server = httptest.NewUnstartedServer(http.HandlerFunc(w.answer))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	w.Listener.Close()
	w.Listener = ln
	w.TLS = tlsCfg
	w.StartTLS()
	t.Cleanup(w.Close)
	return w
}

func (w *countingWebhook) answer(rw http.ResponseWriter, r *http.Request) {
	w.calls.Add(1)
	var in webhook.Context
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		http.Error(rw, "bad request", http.StatusBadRequest)
		return
	}
	healthy := true
	out := webhook.Context{Response: &webhook.Response{UID: in.Request.UID, Successful: true, Healthy: &healthy}}
	out.APIVersion, out.Kind = webhook.ContextAPIVersion, webhook.ContextKind
	_ = json.NewEncoder(rw).Encode(out)
}

// caPEM is the PEM of httptest's certificate, its own CA.
func (w *countingWebhook) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw})
}

// webhookConfig is a webhook configuration name answering op for
// Deployments at url, trusting caPEM.
func webhookConfig(t *testing.T, name, url string, caPEM []byte, op string) []byte {
	t.Helper()
	return []byte(fmt.Sprintf(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterWebhookConfiguration",
"metadata":{"name":%q},"webhooks":[{"name":"hook","clientConfig":{"url":%q,"caBundle":%q},"timeoutSeconds":5,
"rules":[{"operations":[%q],"apiGroups":["apps"],"apiVersions":["v1"],"kinds":["Deployment"]}],
"interpreterContextVersions":["v1alpha1"]}]}`, name, url, base64.StdEncoding.EncodeToString(caPEM), op))
}

// deploymentWork is a WorkUpsert of key with one Deployment named key.
func deploymentWork(key string) *agentv1.HubMessage {
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + key + `","namespace":"default"},
"spec":{"replicas":1,"selector":{"matchLabels":{"app":"` + key + `"}},
"template":{"metadata":{"labels":{"app":"` + key + `"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkUpsert{WorkUpsert: &agentv1.WorkUpsert{
		WorkKey: key, Version: "v1", Manifests: [][]byte{[]byte(manifest)},
		Binding: &agentv1.BindingReference{Namespace: "default", Name: key, Uid: "uid-" + key},
	}}}
}
