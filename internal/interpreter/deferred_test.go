package interpreter

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// TestDeferred: a call a webhook answers returns ErrPending at once and
// starts the webhook call in the background, at most maxDeferredCalls at
// a time, once per object; Ready is signalled when one ends and the same
// call then returns its answer, once. A call no webhook answers is made
// directly. Close ends the calls in flight.
func TestDeferred(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
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
		n := int32(42)
		resp := &webhook.Response{UID: in.Request.UID, Successful: true, Replicas: &n}
		_ = json.NewEncoder(w).Encode(webhook.Context{TypeMeta: metav1.TypeMeta{APIVersion: webhook.ContextAPIVersion, Kind: webhook.ContextKind}, Response: resp})
	}))
	defer srv.Close()
	i, err := New(Config{ThirdParty: []configv1alpha1.ResourceInterpreterCustomization{},
		WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer i.Close()
	url, timeout := srv.URL, configv1alpha1.MaxWebhookTimeoutSeconds
	if err := i.ApplyWebhookConfiguration(webhook.Configuration{
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
	}); err != nil {
		t.Fatal(err)
	}
	d := NewDeferred(i)
	defer d.Close()
	ctx := context.Background()

	// Not a webhook's: answered directly (native).
	if deps, err := d.GetDependencies(ctx, deployment(3)); err != nil || len(deps) != 0 {
		t.Errorf("GetDependencies = %v, %v; want none, directly", deps, err)
	}
	named := func(n int) *unstructured.Unstructured {
		o := deployment(3)
		o.SetName(fmt.Sprint("web-", n))
		return o
	}
	for n := range maxDeferredCalls + 2 {
		for range 2 { // asking again while in flight starts nothing more
			if _, _, err := d.GetReplicas(ctx, named(n)); !errors.Is(err, ErrPending) {
				t.Fatalf("GetReplicas(web-%d) = %v; want ErrPending", n, err)
			}
		}
	}
	waitUntil(t, "the webhook's calls", func() bool { return calls.Load() == maxDeferredCalls })
	close(release)
	<-d.Ready()
	waitUntil(t, "an answer", func() bool {
		r, _, err := d.GetReplicas(ctx, named(0))
		if err == nil && r != 42 {
			t.Fatalf("GetReplicas(web-0) = %d; want the webhook's 42", r)
		}
		return err == nil
	})
	if _, _, err := d.GetReplicas(ctx, named(0)); !errors.Is(err, ErrPending) {
		t.Errorf("GetReplicas(web-0) again = %v; want ErrPending (an answer is given once)", err)
	}
	// The calls beyond the bound start once asked again.
	waitUntil(t, "the calls beyond the bound", func() bool {
		_, _, err := d.GetReplicas(ctx, named(maxDeferredCalls+1))
		return err == nil
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
