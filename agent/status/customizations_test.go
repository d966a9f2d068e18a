package status_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/status"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// TestUnreachableWebhookInTheStatus: a health webhook the member cannot
// reach leaves the object's health Unknown (Karmada's failed rule) and the
// manifest's status says that the webhook is unreachable from this member.
func TestUnreachableWebhookInTheStatus(t *testing.T) {
	in, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	hooks := fmt.Sprintf(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterWebhookConfiguration",
"metadata":{"name":"health"},"webhooks":[{"name":"health.example.com","clientConfig":{"url":"https://%s/interpret"},
"rules":[{"operations":["InterpretHealth"],"apiGroups":["apps"],"apiVersions":["v1"],"kinds":["Deployment"]}],
"interpreterContextVersions":["v1alpha1"]}]}`, addr)
	set := &agentv1.Customizations{Version: "c1", WebhookConfigurations: [][]byte{[]byte(hooks)}}
	if refused, err := customizations.New(in, customizations.WebhookPolicy{}, hclog.NewNullLogger()).Load(context.Background(), set); err != nil || len(refused) > 0 {
		t.Fatalf("Load = %v, %v", refused, err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"}}}
	rep := status.Build(context.Background(), in, apply.Snapshot{Key: "w", Version: "v1", Objects: []apply.ObjectState{{
		Identity: &agentv1.ObjectIdentity{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"},
		Result:   agentv1.ApplyResult_APPLY_RESULT_APPLIED, Observed: obj,
	}}})
	m := rep.GetManifests()[0]
	if m.GetHealth() != agentv1.Health_HEALTH_UNKNOWN || !strings.Contains(m.GetMessage(), "webhook is unreachable from this member cluster") ||
		!strings.Contains(m.GetMessage(), addr) {
		t.Errorf("manifest status = health %s, message %q; want Unknown, saying the webhook at %s is unreachable from this member",
			m.GetHealth(), m.GetMessage(), addr)
	}
}

// widgetRIC customizes example.com/v1 Widgets (no built-in rule) with the
// given customizations block (JSON).
func widgetRIC(customizations string) string {
	return `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":"widget"},"spec":{"target":{"apiVersion":"example.com/v1","kind":"Widget"},"customizations":` + customizations + `}}`
}

// TestUserRulesInTheReport: the user's rules as the hub sends them decide
// the reported health and status, and health is reported as Karmada's
// work-status controller does: Healthy without a rule, Unknown (with the
// error) when the rule fails or returns no boolean.
func TestUserRulesInTheReport(t *testing.T) {
	tests := []struct {
		name        string
		ric         string // "" for none
		wantHealth  agentv1.Health
		wantStatus  string // status_json; "" for none
		wantMessage string // in the manifest's message; "" for none
	}{
		{"no rule: Healthy, whole status", "", agentv1.Health_HEALTH_HEALTHY, `{"phase":"Running"}`, ""},
		{"health rule", widgetRIC(`{"healthInterpretation":{"luaScript":"function InterpretHealth(o) return o.status.phase == 'Ready' end"}}`),
			agentv1.Health_HEALTH_UNHEALTHY, `{"phase":"Running"}`, ""},
		{"health rule that fails: Unknown", widgetRIC(`{"healthInterpretation":{"luaScript":"function InterpretHealth(o) error('no phase rule') end"}}`),
			agentv1.Health_HEALTH_UNKNOWN, `{"phase":"Running"}`, "no phase rule"},
		{"health rule without a boolean: Unknown", widgetRIC(`{"healthInterpretation":{"luaScript":"function InterpretHealth(o) end"}}`),
			agentv1.Health_HEALTH_UNKNOWN, `{"phase":"Running"}`, "interpret health"},
		{"status rule", widgetRIC(`{"statusReflection":{"luaScript":"function ReflectStatus(o) return {state = o.status.phase} end"}}`),
			agentv1.Health_HEALTH_HEALTHY, `{"state":"Running"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			set := &agentv1.Customizations{Version: "c1"}
			if tt.ric != "" {
				set.ResourceInterpreterCustomizations = [][]byte{[]byte(tt.ric)}
			}
			if refused, err := customizations.New(in, customizations.WebhookPolicy{}, hclog.NewNullLogger()).Load(context.Background(), set); err != nil || len(refused) > 0 {
				t.Fatalf("Load = %v, %v", refused, err)
			}
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "default"}, "status": map[string]any{"phase": "Running"}}}
			rep := status.Build(context.Background(), in, apply.Snapshot{Key: "w", Version: "v1", Objects: []apply.ObjectState{{
				Identity: &agentv1.ObjectIdentity{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: "default", Name: "w"},
				Result:   agentv1.ApplyResult_APPLY_RESULT_APPLIED, Observed: obj,
			}}})
			m := rep.GetManifests()[0]
			if m.GetHealth() != tt.wantHealth || string(m.GetStatusJson()) != tt.wantStatus ||
				(tt.wantMessage == "") != (m.GetMessage() == "") || !strings.Contains(m.GetMessage(), tt.wantMessage) {
				t.Errorf("Build = health %s, status %s, message %q; want %s, %s, a message with %q",
					m.GetHealth(), m.GetStatusJson(), m.GetMessage(), tt.wantHealth, tt.wantStatus, tt.wantMessage)
			}
		})
	}
}
