package detector

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// webhookReplicas is what the test's webhook answers InterpretReplica.
const webhookReplicas = 7

// hungReplicasWebhook starts a real HTTPS webhook interpreting
// Deployments' replicas that holds every call until release is closed,
// and returns the hub's interpreter with it (the webhook's longest
// timeout, 30 s) and its call count.
func hungReplicasWebhook(t *testing.T, release <-chan struct{}) (*httptest.Server, *interpreter.Interpreter, *atomic.Int64) {
	t.Helper()
	calls := &atomic.Int64{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var in webhook.Context
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		n := int32(webhookReplicas)
		resp := &webhook.Response{UID: in.Request.UID, Successful: true, Replicas: &n}
		_ = json.NewEncoder(w).Encode(webhook.Context{TypeMeta: metav1.TypeMeta{APIVersion: webhook.ContextAPIVersion, Kind: webhook.ContextKind}, Response: resp})
	}))
	t.Cleanup(srv.Close)
	i, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(i.Close)
	url, timeout := srv.URL, configv1alpha1.MaxWebhookTimeoutSeconds
	err = i.ApplyWebhookConfiguration(webhook.Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "deployments",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url,
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})},
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationInterpretReplica},
				Rule:       configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Kinds: []string{"Deployment"}},
			}},
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{webhook.ContextVersion},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, i, calls
}

// TestHungWebhookDoesNotStallOtherTemplates: while the webhook that
// interprets Deployments' replicas holds its calls, a template of another
// kind is bound; once it answers, the Deployment is bound with its
// replicas. Before, the detector's loop waited for the webhook's timeout
// (30 s) on every reconcile of the Deployment.
func TestHungWebhookDoesNotStallOtherTemplates(t *testing.T) {
	release := make(chan struct{})
	srv, interp, calls := hungReplicasWebhook(t, release)
	deferred := interpreter.NewDeferred(interp)
	t.Cleanup(deferred.Close)
	e := newEnv(t)
	stop := e.startWith(deferred)
	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"), selAll("example.io/v1", "Widget"))))
	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.waitFor("the webhook called", func() bool { return calls.Load() > 0 })
	e.put(`{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"},"spec":{"replicas":7}}`)
	e.waitClaim(widgetRef, ppRef("prod", "pp"))
	if _, _, ok := e.binding(webRef); ok {
		t.Fatalf("the Deployment is bound before the webhook answered")
	}

	close(release)
	if b := e.waitClaim(webRef, ppRef("prod", "pp")); b.Spec.Replicas != webhookReplicas {
		t.Errorf("Deployment binding replicas = %d; want the webhook's %d", b.Spec.Replicas, webhookReplicas)
	}
	srv.Close() // its connections' goroutines end before stop counts them
	deferred.Close()
	stop()
}
