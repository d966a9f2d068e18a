package render

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
	"github.com/tetherproj/tether/internal/interpreter/webhooktest"
)

// newHungWebhook starts a real HTTPS webhook revising Deployments'
// replicas (and marking them revised-by) that holds every call until
// released; interpreterOf gives the hub's interpreter that asks it.
func newHungWebhook(t *testing.T) *webhooktest.Hung {
	return webhooktest.StartHung(t, func(req *webhook.Request) *webhook.Response {
		return webhooktest.JSONPatch(fmt.Sprintf(`[{"op":"replace","path":"/spec/replicas","value":%d},{"op":"add","path":"/metadata/annotations/example.com~1revised-by","value":"webhook"}]`,
			*req.DesiredReplicas))
	})
}

func interpreterOf(t *testing.T, hook *webhooktest.Hung) *interpreter.Interpreter {
	return hook.Interpreter(t, configv1alpha1.InterpreterOperationReviseReplica,
		configv1alpha1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"*"}, Kinds: []string{"Deployment"}})
}

// TestHungWebhookDoesNotStallOtherTemplates: while the webhook that
// revises Deployments' replicas holds its calls, ConfigMaps (and the
// works of templates added meanwhile) are rendered and published; the
// Deployment's clusters keep what they have (Gone says Keep). Once the
// webhook answers, the Deployment is published as its last version, never
// an older render over a newer one. Before, the renderer's single loop
// waited for the webhook's timeout (30 s) for each cluster signature.
func TestHungWebhookDoesNotStallOtherTemplates(t *testing.T) {
	hook := newHungWebhook(t)
	e := newEnv(t)
	e.putCluster(cluster("m1", "eu"))
	e.putCluster(cluster("m2", "us"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(divided(), 6, target("m1", 2), target("m2", 4)))
	cfg := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {k: v}\n")
	e.putTemplate(cfg)
	cb := binding(duplicated(), 0, target("m1", 0))
	cb.Name, cb.UID = "cfg-configmap", "b-2"
	e.putBinding(cfg, cb)
	e.startWith(Config{}, interpreterOf(t, hook))

	// The first publication waits for no webhook either.
	first, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	e.waitFor("cfg on m1 while the webhook hangs", func() bool {
		ws, _, err := e.r.Current(first, "m1")
		return err == nil && slices.ContainsFunc(ws, func(w *agentv1.WorkUpsert) bool { return w.GetWorkKey() == cfgKey })
	})
	e.waitFor("the webhook called", func() bool { return hook.Calls.Load() > 0 })
	other := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n")
	e.putTemplate(other)
	ob := binding(duplicated(), 0, target("m1", 0))
	ob.Name, ob.UID = "other-configmap", "b-3"
	e.putBinding(other, ob)
	otherKey := "core/ConfigMap/default/other"
	e.waitFor("a template added while the webhook hangs on m1", func() bool { ws, _ := e.current("m1"); return ws[otherKey] != nil })
	if ws, _ := e.current("m1"); ws[webKey] != nil {
		t.Fatalf("web on m1 before the webhook answered: %v", ws[webKey])
	}
	gone, err := e.r.Gone(e.ctx, "m1", []string{webKey})
	if err != nil || len(gone) != 1 || !gone[0].Keep {
		t.Errorf("Gone(m1, web) while its render waits = %+v, %v; want Keep", gone, err)
	}

	// A newer template while the first render is in flight: the last
	// version published is the newer one.
	v2 := web.DeepCopy()
	if err := unstructured.SetNestedSlice(v2.Object, []any{map[string]any{"name": "web", "image": "nginx:2"}}, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	e.putTemplate(v2)
	e.settle()
	hook.Release()
	for _, c := range []struct {
		name     string
		replicas int64
	}{{"m1", 2}, {"m2", 4}} {
		e.waitFor("web v2 on "+c.name, func() bool {
			ws, _ := e.current(c.name)
			return ws[webKey] != nil && imageOf(t, ws[webKey]) == "nginx:2"
		})
		ws, _ := e.current(c.name)
		if got := replicasOf(t, ws[webKey]); got != c.replicas || revisedBy(t, ws[webKey]) != "webhook" {
			t.Errorf("web on %s: replicas %d revised by %q; want %d by webhook", c.name, got, revisedBy(t, ws[webKey]), c.replicas)
		}
	}
}
