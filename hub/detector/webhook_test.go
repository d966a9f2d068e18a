package detector

import (
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
	"github.com/tetherproj/tether/internal/interpreter/webhooktest"
)

// webhookReplicas is what the test's webhook answers InterpretReplica.
const webhookReplicas = 7

// hungReplicasWebhook starts a real HTTPS webhook interpreting
// Deployments' replicas (webhookReplicas) that holds every call until
// released, and the hub's interpreter that asks it.
func hungReplicasWebhook(t *testing.T) (*webhooktest.Hung, *interpreter.Interpreter) {
	hook := webhooktest.StartHung(t, func(*webhook.Request) *webhook.Response {
		n := int32(webhookReplicas)
		return &webhook.Response{Successful: true, Replicas: &n}
	})
	return hook, hook.Interpreter(t, configv1alpha1.InterpreterOperationInterpretReplica,
		configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Kinds: []string{"Deployment"}})
}

// TestHungWebhookDoesNotStallOtherTemplates: while the webhook that
// interprets Deployments' replicas holds its calls, a template of another
// kind is bound; once it answers, the Deployment is bound with its
// replicas. Before, the detector's loop waited for the webhook's timeout
// (30 s) on every reconcile of the Deployment.
func TestHungWebhookDoesNotStallOtherTemplates(t *testing.T) {
	hook, interp := hungReplicasWebhook(t)
	deferred := interpreter.NewDeferred(interp)
	t.Cleanup(deferred.Close)
	e := newEnv(t)
	stop := e.startWith(deferred)
	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"), selAll("example.io/v1", "Widget"))))
	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.waitFor("the webhook called", func() bool { return hook.Calls.Load() > 0 })
	e.put(`{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"},"spec":{"replicas":7}}`)
	e.waitClaim(widgetRef, ppRef("prod", "pp"))
	if _, _, ok := e.binding(webRef); ok {
		t.Fatalf("the Deployment is bound before the webhook answered")
	}

	hook.Release()
	if b := e.waitClaim(webRef, ppRef("prod", "pp")); b.Spec.Replicas != webhookReplicas {
		t.Errorf("Deployment binding replicas = %d; want the webhook's %d", b.Spec.Replicas, webhookReplicas)
	}
	hook.Close() // its connections' goroutines end before stop counts them
	deferred.Close()
	stop()
}
