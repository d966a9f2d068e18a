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
	if refused, err := customizations.New(in, hclog.NewNullLogger()).Load(context.Background(), set); err != nil || len(refused) > 0 {
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
