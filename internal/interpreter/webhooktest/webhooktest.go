// Package webhooktest starts real HTTPS interpreter webhooks for the tests
// of the hub's controllers: Hung holds every call until released, so a
// test can show that a controller keeps working while a webhook hangs.
package webhooktest

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// Hung is a real HTTPS interpreter webhook that holds every call until
// Release, then answers it with its respond function.
type Hung struct {
	*httptest.Server
	Calls   atomic.Int64 // calls received, answered or not
	release chan struct{}
	once    sync.Once
}

// StartHung starts a Hung webhook answering with respond (the response's
// UID is set to the request's); it is closed when the test ends.
func StartHung(t testing.TB, respond func(*webhook.Request) *webhook.Response) *Hung {
	t.Helper()
	h := &Hung{release: make(chan struct{})}
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Calls.Add(1)
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
		resp := respond(in.Request)
		resp.UID = in.Request.UID
		_ = json.NewEncoder(w).Encode(webhook.Context{TypeMeta: metav1.TypeMeta{APIVersion: webhook.ContextAPIVersion, Kind: webhook.ContextKind}, Response: resp})
	}))
	t.Cleanup(h.Close)
	return h
}

// Release lets every held call and every later one be answered.
func (h *Hung) Release() { h.once.Do(func() { close(h.release) }) }

// Interpreter returns a hub interpreter (webhooks on loopback allowed)
// that asks h for op on the kinds of rule, with the webhook's longest
// timeout (30 s).
func (h *Hung) Interpreter(t testing.TB, op configv1alpha1.InterpreterOperation, rule configv1alpha1.Rule) *interpreter.Interpreter {
	t.Helper()
	i, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(i.Close)
	url, timeout := h.URL, configv1alpha1.MaxWebhookTimeoutSeconds
	err = i.ApplyWebhookConfiguration(webhook.Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: "hung"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name: "hung",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url,
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.Certificate().Raw})},
			Rules:                      []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{op}, Rule: rule}},
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{webhook.ContextVersion},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// JSONPatch is a successful response carrying patch, a JSON patch.
func JSONPatch(patch string) *webhook.Response {
	pt := webhook.PatchTypeJSONPatch
	return &webhook.Response{Successful: true, Patch: []byte(patch), PatchType: &pt}
}
