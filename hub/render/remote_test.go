package render

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// hungWebhook is a real HTTPS interpreter webhook that holds every call
// until release is closed, then revises replicas and marks the object.
type hungWebhook struct {
	*httptest.Server
	release chan struct{}
	calls   atomic.Int64
}

func newHungWebhook(t *testing.T) *hungWebhook {
	h := &hungWebhook{release: make(chan struct{})}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.calls.Add(1)
		var in webhook.Context
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/replicas","value":%d},{"op":"add","path":"/metadata/annotations/example.com~1revised-by","value":"webhook"}]`,
			*in.Request.DesiredReplicas)
		jsonPatch := webhook.PatchTypeJSONPatch
		resp := &webhook.Response{UID: in.Request.UID, Successful: true, Patch: []byte(patch), PatchType: &jsonPatch}
		_ = json.NewEncoder(w).Encode(webhook.Context{TypeMeta: metav1.TypeMeta{APIVersion: webhook.ContextAPIVersion, Kind: webhook.ContextKind}, Response: resp})
	}))
	t.Cleanup(h.Close)
	return h
}

// interpreter is the hub's interpreter with h revising Deployments'
// replicas, with the webhook's longest timeout (30 s).
func (h *hungWebhook) interpreter(t *testing.T) *interpreter.Interpreter {
	t.Helper()
	i, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(i.Close)
	url, timeout := h.URL, configv1alpha1.MaxWebhookTimeoutSeconds
	err = i.ApplyWebhookConfiguration(webhook.Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: "revise"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "deployments",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url,
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.Certificate().Raw})},
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationReviseReplica},
				Rule:       configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Kinds: []string{"Deployment"}},
			}},
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{webhook.ContextVersion},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestHungWebhookDoesNotStallOtherTemplates: while the webhook that
// revises Deployments' replicas holds its calls, ConfigMaps (and the
// works of templates added meanwhile) are rendered and published; the
// Deployment's clusters keep what they have (Gone says Keep). Once the
// webhook answers, the Deployment is published as its last version, never
// an older render over a newer one. Before, the renderer's single loop
// waited for the webhook's timeout (30 s) for each cluster signature.
func TestHungWebhookDoesNotStallOtherTemplates(t *testing.T) {
	hook := newHungWebhook(t)
	e := newEnv(t)
	e.putCluster(cluster("m1", "eu"))
	e.putCluster(cluster("m2", "us"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(divided(), 6, target("m1", 2), target("m2", 4)))
	cfg := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {k: v}\n")
	e.putTemplate(cfg)
	cb := binding(duplicated(), 0, target("m1", 0))
	cb.Name, cb.UID = "cfg-configmap", "b-2"
	e.putBinding(cfg, cb)
	e.startWith(Config{}, hook.interpreter(t))

	// The first publication waits for no webhook either.
	first, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	e.waitFor("cfg on m1 while the webhook hangs", func() bool {
		ws, _, err := e.r.Current(first, "m1")
		return err == nil && slices.ContainsFunc(ws, func(w *agentv1.WorkUpsert) bool { return w.GetWorkKey() == cfgKey })
	})
	e.waitFor("the webhook called", func() bool { return hook.calls.Load() > 0 })
	other := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n")
	e.putTemplate(other)
	ob := binding(duplicated(), 0, target("m1", 0))
	ob.Name, ob.UID = "other-configmap", "b-3"
	e.putBinding(other, ob)
	otherKey := "core/ConfigMap/default/other"
	e.waitFor("a template added while the webhook hangs on m1", func() bool { ws, _ := e.current("m1"); return ws[otherKey] != nil })
	if ws, _ := e.current("m1"); ws[webKey] != nil {
		t.Fatalf("web on m1 before the webhook answered: %v", ws[webKey])
	}
	gone, err := e.r.Gone(e.ctx, "m1", []string{webKey})
	if err != nil || len(gone) != 1 || !gone[0].Keep {
		t.Errorf("Gone(m1, web) while its render waits = %+v, %v; want Keep", gone, err)
	}

	// A newer template while the first render is in flight: the last
	// version published is the newer one.
	v2 := web.DeepCopy()
	if err := unstructured.SetNestedSlice(v2.Object, []any{map[string]any{"name": "web", "image": "nginx:2"}}, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	e.putTemplate(v2)
	e.settle()
	close(hook.release)
	for _, c := range []struct {
		name     string
		replicas int64
	}{{"m1", 2}, {"m2", 4}} {
		e.waitFor("web v2 on "+c.name, func() bool {
			ws, _ := e.current(c.name)
			return ws[webKey] != nil && imageOf(t, ws[webKey]) == "nginx:2"
		})
		ws, _ := e.current(c.name)
		if got := replicasOf(t, ws[webKey]); got != c.replicas || revisedBy(t, ws[webKey]) != "webhook" {
			t.Errorf("web on %s: replicas %d revised by %q; want %d by webhook", c.name, got, revisedBy(t, ws[webKey]), c.replicas)
		}
	}
}
