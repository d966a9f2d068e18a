package customizations

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// ric is a customization of Deployments named name with the given
// customizations block (JSON).
func ric(name, customizations string) string {
	return fmt.Sprintf(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":%q},"spec":{"target":{"apiVersion":"apps/v1","kind":"Deployment"},"customizations":%s}}`, name, customizations)
}

const (
	retainTier   = `{"retention":{"luaScript":"function Retain(d, o) d.metadata.labels.tier = o.metadata.labels.tier return d end"}}`
	neverHealthy = `{"healthInterpretation":{"luaScript":"function InterpretHealth(o) return false end"}}`
)

// hooks is a webhook configuration answering InterpretHealth for
// Deployments at url.
func hooks(name, url string) string {
	return fmt.Sprintf(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterWebhookConfiguration",
"metadata":{"name":%q},"webhooks":[{"name":"health.example.com","clientConfig":{"url":%q},"timeoutSeconds":2,
"rules":[{"operations":["InterpretHealth"],"apiGroups":["apps"],"apiVersions":["v1"],"kinds":["Deployment"]}],
"interpreterContextVersions":["v1alpha1"]}]}`, name, url)
}

func set(version string, rics []string, webhooks ...string) *agentv1.Customizations {
	s := &agentv1.Customizations{Version: version}
	for _, r := range rics {
		s.ResourceInterpreterCustomizations = append(s.ResourceInterpreterCustomizations, []byte(r))
	}
	for _, w := range webhooks {
		s.WebhookConfigurations = append(s.WebhookConfigurations, []byte(w))
	}
	return s
}

func newInterpreter(t *testing.T) *interpreter.Interpreter {
	t.Helper()
	in, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// deployment is a ready Deployment labelled tier.
func deployment(tier string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "generation": int64(1), "labels": map[string]any{"tier": tier}},
		"spec":     map[string]any{"replicas": int64(1)},
		"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1), "updatedReplicas": int64(1),
			"availableReplicas": int64(1), "readyReplicas": int64(1)},
	}}
}

// TestLoadRunsTheUsersRules: a loaded set's Lua rules run in the
// interpreter ahead of the built-in ones, and a later set without them
// gives the built-in rules back, with no new interpreter.
func TestLoadRunsTheUsersRules(t *testing.T) {
	ctx := context.Background()
	in := newInterpreter(t)
	l := New(in, WebhookPolicy{}, hclog.NewNullLogger())
	if got := in.Health(ctx, deployment("web")); got != configv1alpha1.ResourceHealthy {
		t.Fatalf("built-in health of a ready Deployment = %s; want Healthy", got)
	}
	refused, err := l.Load(ctx, set("v1", []string{ric("a-retain", retainTier), ric("b-health", neverHealthy)}))
	if err != nil || len(refused) != 0 {
		t.Fatalf("Load = %v, %v; want nothing refused", refused, err)
	}
	if l.Version() != "v1" {
		t.Errorf("Version() = %q; want v1", l.Version())
	}
	out, err := in.Retain(ctx, deployment("web"), deployment("canary"))
	if err != nil || out.GetLabels()["tier"] != "canary" {
		t.Errorf("Retain with the user's rule = tier %q, %v; want the member's canary", out.GetLabels()["tier"], err)
	}
	if got := in.Health(ctx, deployment("web")); got != configv1alpha1.ResourceUnhealthy {
		t.Errorf("health with the user's rule = %s; want Unhealthy", got)
	}

	if _, err := l.Load(ctx, set("", nil)); err != nil {
		t.Fatal(err)
	}
	out, err = in.Retain(ctx, deployment("web"), deployment("canary"))
	if err != nil || out.GetLabels()["tier"] != "web" {
		t.Errorf("Retain after the empty set = tier %q, %v; want the template's web (native rule)", out.GetLabels()["tier"], err)
	}
	if got := in.Health(ctx, deployment("web")); got != configv1alpha1.ResourceHealthy {
		t.Errorf("health after the empty set = %s; want the built-in Healthy", got)
	}
}

// TestLoadRefuses: what does not decode or validate is left out and named,
// the rest is loaded; a set over MaxSetBytes is refused whole and the
// previous one kept.
func TestLoadRefuses(t *testing.T) {
	ctx := context.Background()
	in := newInterpreter(t)
	l := New(in, WebhookPolicy{}, hclog.NewNullLogger())
	refused, err := l.Load(ctx, set("v1",
		[]string{
			`{"kind": "ResourceInterpreterCustomization", "garbage`,
			ric("syntax", `{"healthInterpretation":{"luaScript":"function InterpretHealth(o) return ( end"}}`),
			ric("twice", neverHealthy),
			ric("twice", retainTier),
		},
		hooks("plain-http", "http://example.com/interpret"),
		`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterWebhookConfiguration","metadata":{"name":"x"},"unknown":1}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"customization #0", "customization syntax", "customization twice: a second one", "webhook configuration plain-http", "webhook configuration #1"} {
		if !strings.Contains(strings.Join(refused, "\n"), want) {
			t.Errorf("refused = %q; want a line with %q", refused, want)
		}
	}
	if len(refused) != 5 {
		t.Errorf("refused %d: %q; want 5", len(refused), refused)
	}
	if got := in.Health(ctx, deployment("web")); got != configv1alpha1.ResourceUnhealthy {
		t.Errorf("health = %s; want Unhealthy: the first customization named twice is loaded", got)
	}

	big := set("v2", []string{ric("big", `{"retention":{"luaScript":"-- `+strings.Repeat("x", MaxSetBytes)+`\nfunction Retain(d, o) return d end"}}`)})
	if _, err := l.Load(ctx, big); err == nil {
		t.Fatal("Load of a set over MaxSetBytes = nil error; want it refused")
	}
	if l.Version() != "v1" || in.Health(ctx, deployment("web")) != configv1alpha1.ResourceUnhealthy {
		t.Errorf("after a refused set: version %q; want v1 and its rules kept", l.Version())
	}
	if _, err := l.Load(ctx, nil); err == nil {
		t.Error("Load(nil) = nil error; want it refused")
	}
}

// TestUnreachableWebhookIsExplained: a webhook the member cannot reach
// makes health Unknown (Karmada's failed rule), with an error that says
// the webhook is unreachable from this member; a set without it removes
// it.
func TestUnreachableWebhookIsExplained(t *testing.T) {
	ctx := context.Background()
	in := newInterpreter(t)
	l := New(in, WebhookPolicy{}, hclog.NewNullLogger())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	if _, err := l.Load(ctx, set("v1", nil, hooks("health", "https://"+closed+"/interpret"))); err != nil {
		t.Fatal(err)
	}
	h, err := in.HealthWithError(ctx, deployment("web"))
	if h != configv1alpha1.ResourceUnknown || err == nil {
		t.Fatalf("health through an unreachable webhook = %s, %v; want Unknown with an error", h, err)
	}
	explained := Explain(err)
	if !errors.Is(explained, ErrWebhookUnreachable) || !strings.Contains(explained.Error(), "unreachable from this member cluster") ||
		!strings.Contains(explained.Error(), closed) {
		t.Errorf("Explain = %q; want it to say the webhook at %s is unreachable from this member", explained, closed)
	}
	if other := errors.New("lua: boom"); Explain(other) != other {
		t.Errorf("Explain(%v) = %v; want it unchanged", other, Explain(other))
	}

	if _, err := l.Load(ctx, set("", nil)); err != nil {
		t.Fatal(err)
	}
	if in.HookEnabled(deployment("web").GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretHealth) &&
		in.Health(ctx, deployment("web")) != configv1alpha1.ResourceHealthy {
		t.Errorf("health after the webhook configuration left the set = %s; want the built-in Healthy", in.Health(ctx, deployment("web")))
	}
}
