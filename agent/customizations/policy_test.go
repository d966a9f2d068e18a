package customizations

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// TestWebhookPolicyCheck: the zero policy calls every webhook;
// --refuse-interpreter-webhooks refuses all; --interpreter-webhook-hosts
// lets only its hosts (exact, or under *.suffix; a service by its
// NAME.NAMESPACE.svc) be called, and names the host it refuses.
func TestWebhookPolicyCheck(t *testing.T) {
	at := func(url string) webhook.Configuration {
		cfg, err := webhook.DecodeConfiguration([]byte(hooks("cfg", url)))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	service := at("https://unused.example.com/")
	service.Webhooks[0].ClientConfig.URL = nil
	service.Webhooks[0].ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "hooks", Name: "interp"}
	for _, tc := range []struct {
		name   string
		policy WebhookPolicy
		cfg    webhook.Configuration
		want   string // in the refusal; "" for none
	}{
		{"zero policy", WebhookPolicy{}, at("https://anywhere.example.com/x"), ""},
		{"refuse all", WebhookPolicy{Refuse: true}, at("https://hooks.example.com/x"), "(--refuse-interpreter-webhooks)"},
		{"listed host", WebhookPolicy{Hosts: []string{"hooks.example.com"}}, at("https://HOOKS.example.com:8443/x"), ""},
		{"listed address", WebhookPolicy{Hosts: []string{"10.0.0.7"}}, at("https://10.0.0.7/x"), ""},
		{"under a suffix", WebhookPolicy{Hosts: []string{"*.example.com"}}, at("https://a.hooks.example.com/x"), ""},
		{"the suffix itself", WebhookPolicy{Hosts: []string{"*.example.com"}}, at("https://example.com/x"), `at host "example.com", not in --interpreter-webhook-hosts *.example.com`},
		{"other host", WebhookPolicy{Hosts: []string{"hooks.example.com"}}, at("https://evil.example.net/x"), `webhook health.example.com is at host "evil.example.net"`},
		{"service", WebhookPolicy{Hosts: []string{"*.svc"}}, service, ""},
		{"service elsewhere", WebhookPolicy{Hosts: []string{"*.example.com"}}, service, `at host "interp.hooks.svc"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Check(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check = %v; want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrWebhookRefused) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check = %v; want ErrWebhookRefused saying %q", err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "bad host", "*.", "https://h"} {
		if err := (WebhookPolicy{Hosts: []string{bad}}).Validate(); err == nil || !strings.Contains(err.Error(), "--interpreter-webhook-hosts") {
			t.Errorf("Validate(hosts %q) = %v; want an error naming --interpreter-webhook-hosts", bad, err)
		}
	}
	if err := (WebhookPolicy{Hosts: []string{"h.example.com", "*.svc", "10.0.0.7", "::1"}}).Validate(); err != nil {
		t.Errorf("Validate(good hosts) = %v; want nil", err)
	}
}

// TestRefusedWebhookIsNeverCalled: a loader whose policy refuses a webhook
// configuration names it in the refusals, the operation its rule selects
// fails saying it is refused (never the built-in rule), and its webhook,
// a real HTTPS server, receives nothing; a loader that allows it calls it.
func TestRefusedWebhookIsNeverCalled(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	set := set("v1", nil, hooksWithCA("health", srv.URL, srv.Certificate().Raw))
	newLoopbackInterpreter := func() *interpreter.Interpreter {
		in, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(in.Close)
		return in
	}

	in := newLoopbackInterpreter()
	refused, err := New(in, WebhookPolicy{Hosts: []string{"hooks.example.com"}}, hclog.NewNullLogger()).Load(ctx, set)
	if err != nil || len(refused) != 1 || !strings.Contains(refused[0], "webhook configuration health: "+ErrWebhookRefused.Error()) ||
		!strings.Contains(refused[0], `at host "127.0.0.1", not in --interpreter-webhook-hosts hooks.example.com`) {
		t.Fatalf("Load = %q, %v; want the configuration refused, naming its host and the flag", refused, err)
	}
	h, err := in.HealthWithError(ctx, deployment("web"))
	if h != configv1alpha1.ResourceUnknown || !errors.Is(err, ErrWebhookRefused) {
		t.Errorf("health through the refused webhook = %s, %v; want Unknown with ErrWebhookRefused", h, err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("calls of the refused webhook = %d; want 0", n)
	}

	allowed := newLoopbackInterpreter()
	if refused, err := New(allowed, WebhookPolicy{Hosts: []string{"127.0.0.1"}}, hclog.NewNullLogger()).Load(ctx, set); err != nil || len(refused) != 0 {
		t.Fatalf("Load with 127.0.0.1 allowed = %q, %v; want nothing refused", refused, err)
	}
	if _, err := allowed.HealthWithError(ctx, deployment("web")); err == nil || calls.Load() == 0 {
		t.Errorf("health through the allowed webhook = %v after %d calls; want its HTTP 500 after a call", err, calls.Load())
	}
}

// hooksWithCA is hooks(name, url) trusting the CA certificate der.
func hooksWithCA(name, url string, der []byte) string {
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return strings.Replace(hooks(name, url), `"clientConfig":{`, `"clientConfig":{"caBundle":"`+ca+`",`, 1)
}
