package hubclient_test

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/agent/state"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// neverHealthyRIC makes every Deployment Unhealthy.
const neverHealthyRIC = `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":"never"},"spec":{"target":{"apiVersion":"apps/v1","kind":"Deployment"},
"customizations":{"healthInterpretation":{"luaScript":"function InterpretHealth(o) return false end"}}}}`

// withRules gives the client a real loader over in.
func withRules(in *interpreter.Interpreter) option {
	return func(c *hubclient.Config) {
		c.Customizations = customizations.New(in, customizations.WebhookPolicy{}, hclog.NewNullLogger())
	}
}

func newInterp(t *testing.T) *interpreter.Interpreter {
	t.Helper()
	in, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func customizationsMsg(version string, rics ...string) *agentv1.HubMessage {
	set := &agentv1.Customizations{Version: version}
	for _, r := range rics {
		set.ResourceInterpreterCustomizations = append(set.ResourceInterpreterCustomizations, []byte(r))
	}
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Customizations{Customizations: set}}
}

func customizationsAcks(m *agentv1.AgentMessage) bool { return m.GetCustomizationsAck() != nil }

var deploymentGVK = unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
	"metadata": map[string]any{"name": "web", "namespace": "default"}}}

// TestCustomizationsAreLoadedPersistedAndNamed: a set the hub sends is
// loaded into the interpreter, acknowledged with what was refused,
// persisted, and named in the next Hello; an agent restarted without its
// hub runs with it from the start.
func TestCustomizationsAreLoadedPersistedAndNamed(t *testing.T) {
	certs := hubtest.NewCerts(t)
	dir := t.TempDir()
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	in := newInterp(t)
	first := startAgent(t, certs, hub.Addr, dir, withRules(in))
	s := hub.Next(t)
	if h := s.Hello(); h.GetCustomizationsVersion() != "" || !h.GetCustomizationsSupported() {
		t.Fatalf("first Hello: customizations %q, supported %v; want none, supported", h.GetCustomizationsVersion(), h.GetCustomizationsSupported())
	}
	s.Send(t, hubtest.Welcome(hubA, beat), customizationsMsg("c1", neverHealthyRIC, `{"garbage`), hubtest.SyncDone(0))
	ack := s.Recv(t, customizationsAcks).GetCustomizationsAck()
	if ack.GetVersion() != "c1" || len(ack.GetRefused()) != 1 {
		t.Errorf("CustomizationsAck = %v; want c1 with the one that does not decode refused", ack)
	}
	if h := in.Health(context.Background(), &deploymentGVK); h != configv1alpha1.ResourceUnhealthy {
		t.Errorf("health after the set = %s; want Unhealthy (the user's rule)", h)
	}
	first.stop(t)
	hub.Stop()
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := store.Load(context.Background()); err != nil || snap.Customizations.GetVersion() != "c1" {
		t.Fatalf("state holds customizations %q (%v); want c1", snap.Customizations.GetVersion(), err)
	}

	// Restarted, the hub away: the rules hold from the start.
	again := newInterp(t)
	startAgent(t, certs, hub.Addr, dir, withRules(again))
	if h := again.Health(context.Background(), &deploymentGVK); h != configv1alpha1.ResourceUnhealthy {
		t.Errorf("health after a restart without the hub = %s; want Unhealthy (the persisted rule)", h)
	}
	hub = hubtest.Start(t, certs, hub.Addr)
	if v := hub.Next(t).Hello().GetCustomizationsVersion(); v != "c1" {
		t.Errorf("Hello after the restart names customizations %q; want c1", v)
	}
}
