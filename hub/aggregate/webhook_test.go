package aggregate

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
	"github.com/tetherproj/tether/internal/interpreter/webhooktest"
)

var widgetRef = store.ObjectRef{Group: "example.io", Kind: "Widget", Namespace: "prod", Name: "w"}

// hungStatusWebhook starts a real HTTPS webhook aggregating Widgets'
// status (status.aggregatedBy) that holds every call until released, and
// the hub's interpreter that asks it.
func hungStatusWebhook(t *testing.T) (*webhooktest.Hung, *interpreter.Interpreter) {
	hook := webhooktest.StartHung(t, func(*webhook.Request) *webhook.Response {
		return webhooktest.JSONPatch(`[{"op":"add","path":"/status","value":{"aggregatedBy":"webhook"}}]`)
	})
	return hook, hook.Interpreter(t, configv1alpha1.InterpreterOperationAggregateStatus,
		configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"*"}, Kinds: []string{"Widget"}})
}

// TestHungWebhookDoesNotStallOtherBindings: while the webhook that
// aggregates Widgets' status holds its calls, a Deployment's status is
// aggregated; once it answers, the Widget's is. Before, the aggregator's
// loop waited for the webhook's timeout (30 s) on every flush of the
// Widget.
func TestHungWebhookDoesNotStallOtherBindings(t *testing.T) {
	hook, interp := hungStatusWebhook(t)
	deferred := interpreter.NewDeferred(interp)
	t.Cleanup(deferred.Close)
	e := newEnv(t)
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding("m1"))
	e.put(store.ObjectKey(widgetRef), map[string]any{"apiVersion": "example.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "prod", "generation": 1}})
	e.put(store.BindingKey(widgetRef), &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "w-widget"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "example.io/v1", Kind: "Widget", Namespace: "prod", Name: "w"},
			Placement: &policyv1alpha1.Placement{},
			Clusters:  []workv1alpha1.TargetCluster{{Name: "m1"}},
		},
	})
	e.heartbeat("m1")
	a := New(e.st, deferred, e.leases, Config{Clock: e.clock, View: e.view}, hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: testWriter{e.t}}))
	stopRelay := e.goRun("relay", a.Relay)
	stopRun := e.goRun("aggregate", a.Run)

	widget := &agentv1.StatusReport{WorkKey: "example.io/Widget/prod/w", Version: "v1", Digest: "w1", Manifests: []*agentv1.ManifestStatus{{
		Identity:   &agentv1.ObjectIdentity{Group: "example.io", Version: "v1", Kind: "Widget", Namespace: "prod", Name: "w"},
		StatusJson: []byte(`{"phase":"Running"}`), Applied: true}}}
	if err := a.Report(e.ctx, "m1", widget); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(waitTimeout); hook.Calls.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the webhook to be called")
		}
	}
	web := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: "d1", Manifests: []*agentv1.ManifestStatus{
		manifest("web", agentv1.Health_HEALTH_HEALTHY, true, memberStatus(3))}}
	if err := a.Report(e.ctx, "m1", web); err != nil {
		t.Fatal(err)
	}
	e.waitBinding(webRef, "the Deployment's readyReplicas while the webhook hangs", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })

	hook.Release()
	e.waitBinding(widgetRef, "the Widget's status from the webhook", func(b *workv1alpha1.ResourceBinding) bool {
		raw, ok := fold.TemplateStatus(b)
		return ok && strings.Contains(string(raw), `"aggregatedBy":"webhook"`)
	})
	hook.Close() // its connections' goroutines end before the leak check
	deferred.Close()
	stopRun()
	stopRelay()
}
