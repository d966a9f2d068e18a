package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// server is a real HTTPS interpreter webhook whose answer the test sets.
type server struct {
	*httptest.Server
	// answer turns the request into a response; nil answers are sent as is.
	answer func(req *Request) *Response
	delay  time.Duration
}

func newServer(t *testing.T, answer func(*Request) *Response) *server {
	s := &server{answer: answer}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in Context
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
		_ = json.NewEncoder(w).Encode(Context{TypeMeta: typeMeta(), Response: s.answer(in.Request)})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) caBundle() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

func config(name, url string, ca []byte, timeout int32, rules ...configv1alpha1.RuleWithOperations) Configuration {
	return Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:                       "hook",
			ClientConfig:               admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules:                      rules,
			TimeoutSeconds:             &timeout,
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}

var allWorkloads = configv1alpha1.RuleWithOperations{
	Operations: []configv1alpha1.InterpreterOperation{"*"},
	Rule:       configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"*"}, Kinds: []string{"Workload"}},
}

func workload() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.io/v1", "kind": "Workload",
		"metadata": map[string]any{"name": "w", "namespace": "lab"},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
}

func TestWebhookOperations(t *testing.T) {
	healthy := true
	jsonPatch := PatchTypeJSONPatch
	srv := newServer(t, func(req *Request) *Response {
		resp := &Response{UID: req.UID, Successful: true}
		switch req.Operation {
		case configv1alpha1.InterpreterOperationInterpretHealth:
			resp.Healthy = &healthy
		case configv1alpha1.InterpreterOperationReviseReplica:
			resp.Patch = []byte(`[{"op":"replace","path":"/spec/replicas","value":` + jsonInt(*req.DesiredReplicas) + `}]`)
			resp.PatchType = &jsonPatch
		case configv1alpha1.InterpreterOperationInterpretReplica:
			n := int32(4)
			resp.Replicas = &n
		case configv1alpha1.InterpreterOperationInterpretDependency:
			resp.Dependencies = []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "Secret", Namespace: "lab"}}
		}
		return resp
	})
	w := New(loopbackOK)
	if err := w.Apply(config("cfg", srv.URL, srv.caBundle(), 5, allWorkloads)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	ctx := context.Background()

	h, ok, err := w.InterpretHealth(ctx, workload())
	if !ok || err != nil || !h {
		t.Errorf("InterpretHealth = %t, %t, %v; want true, true, nil", h, ok, err)
	}
	revised, ok, err := w.ReviseReplica(ctx, workload(), 5)
	if !ok || err != nil {
		t.Fatalf("ReviseReplica = %t, %v", ok, err)
	}
	if got, _, _ := unstructured.NestedInt64(revised.Object, "spec", "replicas"); got != 5 {
		t.Errorf("ReviseReplica spec.replicas = %d; want 5", got)
	}
	r, _, ok, err := w.GetReplicas(ctx, workload())
	if !ok || err != nil || r != 4 {
		t.Errorf("GetReplicas = %d, %t, %v; want 4, true, nil", r, ok, err)
	}
	// The webhook's dependencies are validated.
	_, ok, err = w.GetDependencies(ctx, workload())
	if !ok || err == nil || !strings.Contains(err.Error(), "dependency can not leave name and labelSelector all empty") {
		t.Errorf("GetDependencies error = %v; want the validation error", err)
	}
	// A response without the required field is refused.
	_, _, err = w.ReflectStatus(ctx, workload())
	if err == nil || !strings.Contains(err.Error(), "response.rawStatus is required") {
		t.Errorf("ReflectStatus error = %v; want rawStatus required", err)
	}
	// Another kind is not matched.
	other := workload()
	other.SetKind("Other")
	if _, ok, err := w.InterpretHealth(ctx, other); ok || err != nil {
		t.Errorf("InterpretHealth(Other) = enabled %t, %v; want not enabled", ok, err)
	}
	w.Remove("cfg")
	if w.HookEnabled(schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Workload"}, "InterpretHealth") {
		t.Errorf("HookEnabled after Remove = true; want false")
	}
}

func jsonInt(n int32) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestWebhookFailures(t *testing.T) {
	healthy := true
	good := func(req *Request) *Response { return &Response{UID: req.UID, Successful: true, Healthy: &healthy} }
	tests := []struct {
		name    string
		answer  func(*Request) *Response
		delay   time.Duration
		wrongCA bool
		wantErr string
	}{
		{name: "uid mismatch", answer: func(req *Request) *Response {
			return &Response{UID: "other", Successful: true, Healthy: &healthy}
		}, wantErr: "does not match request uid"},
		{name: "unsuccessful", answer: func(req *Request) *Response {
			return &Response{UID: req.UID, Status: &RequestStatus{Message: "nope", Code: 500}}
		}, wantErr: "interpretation failed (code 500): nope"},
		{name: "unsuccessful without status", answer: func(req *Request) *Response {
			return &Response{UID: req.UID}
		}, wantErr: "unsuccessful response without status"},
		{name: "no response", answer: func(*Request) *Response { return nil }, wantErr: "response is empty"},
		{name: "timeout", answer: good, delay: 3 * time.Second, wantErr: "Client.Timeout exceeded"},
		{name: "wrong CA", answer: good, wrongCA: true, wantErr: "certificate signed by unknown authority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.answer)
			srv.delay = tt.delay
			ca := srv.caBundle()
			if tt.wrongCA {
				ca = otherCA(t)
			}
			w := New(loopbackOK)
			if err := w.Apply(config("cfg", srv.URL, ca, 1, allWorkloads)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			start := time.Now()
			_, ok, err := w.InterpretHealth(context.Background(), workload())
			if !ok || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("InterpretHealth = enabled %t, err %v; want error containing %q", ok, err, tt.wantErr)
			}
			if d := time.Since(start); d > 2500*time.Millisecond {
				t.Errorf("InterpretHealth took %v; want within the 1 s timeout", d)
			}
		})
	}
}

func TestWebhookRulesAndOrder(t *testing.T) {
	srv := newServer(t, func(req *Request) *Response { return &Response{UID: req.UID, Successful: true} })
	w := New(loopbackOK)
	ca := srv.caBundle()
	healthOnly := configv1alpha1.RuleWithOperations{Operations: []configv1alpha1.InterpreterOperation{"InterpretHealth"},
		Rule: configv1alpha1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"v1"}, Kinds: []string{"*"}}}
	for _, cfg := range []Configuration{config("b", srv.URL, ca, 1, allWorkloads), config("a", srv.URL, ca, 1, healthOnly)} {
		if err := w.Apply(cfg); err != nil {
			t.Fatal(err)
		}
	}
	gvk := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Workload"}
	if h := w.find(gvk, "InterpretHealth"); h == nil || h.uid != "a/hook" {
		t.Errorf("find(health) = %v; want a/hook, the first by uid", h)
	}
	if h := w.find(gvk, "Retain"); h == nil || h.uid != "b/hook" {
		t.Errorf("find(retain) = %v; want b/hook", h)
	}
	if w.HookEnabled(schema.GroupVersionKind{Group: "apps", Version: "v2", Kind: "Deployment"}, "Retain") {
		t.Errorf("HookEnabled(apps/v2 Deployment, Retain) = true; want false")
	}
	bad := config("c", "http://insecure.example", nil, 1, allWorkloads)
	if err := w.Apply(bad); err == nil || !strings.Contains(err.Error(), "scheme must be https") {
		t.Errorf("Apply(http url) error = %v; want refused", err)
	}
	if err := w.Apply(config("d", srv.URL, []byte("garbage"), 1, allWorkloads)); err == nil {
		t.Errorf("Apply(bad caBundle) error = nil; want refused")
	}
	if err := w.Apply(config("e", srv.URL, ca, 31, allWorkloads)); err == nil {
		t.Errorf("Apply(timeout 31) error = nil; want refused")
	}
}

// otherCA is a self-signed CA that did not sign the test server's
// certificate (every httptest server shares one certificate).
func otherCA(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// loopbackOK allows the test servers, which listen on 127.0.0.1.
var loopbackOK = Options{Policy: Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}

// TestRefusedConfigurationIsNeverCalled: a configuration given to Refuse
// still answers its rules, each call failing at once with the reason, and
// its webhook receives nothing; applied again, it is called.
func TestRefusedConfigurationIsNeverCalled(t *testing.T) {
	var calls atomic.Int64
	healthy := true
	srv := newServer(t, func(req *Request) *Response {
		calls.Add(1)
		return &Response{UID: req.UID, Successful: true, Healthy: &healthy}
	})
	w := New(loopbackOK)
	cfg := config("cfg", srv.URL, srv.caBundle(), 5, allWorkloads)
	why := errors.New("refused by the member's owner")
	if err := w.Refuse(cfg, why); err != nil {
		t.Fatalf("Refuse: %v", err)
	}
	gvk := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Workload"}
	if !w.HookEnabled(gvk, "InterpretHealth") {
		t.Fatal("HookEnabled of a refused configuration's rule = false; want true: no later step answers in its place")
	}
	_, ok, err := w.InterpretHealth(context.Background(), workload())
	if !ok || !errors.Is(err, why) || !strings.Contains(err.Error(), "webhook cfg/hook: refused by the member's owner") {
		t.Errorf("InterpretHealth through a refused webhook = enabled %t, %v; want enabled with an error naming it and wrapping the reason", ok, err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("calls of the refused webhook = %d; want 0", n)
	}
	if err := w.Refuse(cfg, nil); err == nil {
		t.Error("Refuse without a reason = nil error; want it refused")
	}

	if err := w.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if h, _, err := w.InterpretHealth(context.Background(), workload()); err != nil || !h || calls.Load() != 1 {
		t.Errorf("InterpretHealth once applied = %t, %v with %d calls; want true, nil, one call", h, err, calls.Load())
	}
}
