package detector

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// garbage stores bytes that are not JSON at ref's key.
func (e *env) garbage(ref store.ObjectRef) {
	e.t.Helper()
	if _, err := e.st.Put(e.ctx, store.ObjectKey(ref), []byte(`{"apiVersion": "broken`)); err != nil {
		e.t.Fatalf("put garbage at %s: %v", refString(ref), err)
	}
}

// decodeMessage is the binding's InputsDecoded message when the condition
// is False, "" when the binding has none.
func decodeMessage(b *workv1alpha1.ResourceBinding) string {
	c := meta.FindStatusCondition(b.Status.Conditions, ConditionInputsDecoded)
	if c == nil || c.Status != "False" {
		return ""
	}
	return c.Message
}

// waitReported waits until ref's binding is claimed by policy and reports
// an undecodable input whose message contains what; it returns the binding.
func (e *env) waitReported(ref store.ObjectRef, policy *bind.PolicyRef, what string) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	var b *workv1alpha1.ResourceBinding
	e.waitFor("binding of "+refString(ref)+" reporting "+what, func() bool {
		var ok bool
		b, _, ok = e.binding(ref)
		if !ok {
			return false
		}
		c := bind.ClaimOf(b)
		return c != nil && c.Policy == *policy && strings.Contains(decodeMessage(b), what)
	})
	return b
}

// TestUndecodableTemplateKeepsBinding: a template whose stored value stops
// decoding keeps its binding, claim and clusters (the last good value is
// used), across a restart of the detector too, and the binding says why;
// once it decodes again the condition goes. Before, the template counted
// as deleted and its binding (so every member object) was removed.
func TestUndecodableTemplateKeepsBinding(t *testing.T) {
	e := newEnv(t)
	counts := guard.NewCounts()
	stop := e.start(WithCounts(counts))
	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.put(deployJSON("prod", "web", 2, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.schedule(webRef, "m1")

	e.garbage(webRef)
	b := e.waitReported(webRef, ppRef("prod", "pp"), "template")
	if len(b.Spec.Clusters) != 1 || b.Spec.Replicas != 2 {
		t.Errorf("binding with an undecodable template: clusters %+v, replicas %d; want m1 and 2 kept", b.Spec.Clusters, b.Spec.Replicas)
	}
	if counts.Get("detector", guard.KindDecode) == 0 {
		t.Errorf("decode errors counted = 0; want some")
	}

	stop()
	e.start() // no last good value now
	e.probe("prod", 1)
	b = e.waitReported(webRef, ppRef("prod", "pp"), "template")
	if len(b.Spec.Clusters) != 1 {
		t.Errorf("after a restart: clusters %+v; want m1 kept", b.Spec.Clusters)
	}

	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.waitFor("condition cleared and replicas 3", func() bool {
		b, _, _ := e.binding(webRef)
		return b != nil && b.Spec.Replicas == 3 && meta.FindStatusCondition(b.Status.Conditions, ConditionInputsDecoded) == nil
	})
}

// TestUndecodablePolicyKeepsClaim: a claiming policy that stops decoding
// is not a deleted policy: the template is neither moved to another
// matching policy nor released, before or after a restart, and its
// binding says why. An undecodable override policy is reported on the
// bindings it selected.
func TestUndecodablePolicyKeepsClaim(t *testing.T) {
	e := newEnv(t)
	stop := e.start()
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	a := e.put(ppObj("prod", "a", 5, deploys(selAll("apps/v1", "Deployment"))))
	e.put(ppObj("prod", "b", 1, deploys(selAll("apps/v1", "Deployment"))))
	e.waitClaim(webRef, ppRef("prod", "a"))

	e.garbage(a)
	e.waitReported(webRef, ppRef("prod", "a"), "PropagationPolicy prod/a")
	stop()
	e.start()
	e.probe("prod", 1)
	e.waitReported(webRef, ppRef("prod", "a"), "PropagationPolicy prod/a")

	op := e.put(`{"apiVersion":"policy.tether.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"op","namespace":"prod"},"spec":{}}`)
	e.garbage(op)
	e.waitReported(webRef, ppRef("prod", "a"), "OverridePolicy prod/op")
}

// panicky panics when asked the replicas of a template named api.
type panicky struct{ bind.Interpreter }

func (p panicky) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error) {
	if obj.GetName() == "api" {
		panic("test: bad data in api")
	}
	return p.Interpreter.GetReplicas(ctx, obj)
}

// TestPanickingTemplateSkipped: a template whose reconcile panics is
// skipped (logged, counted, retried later) and the others are bound.
func TestPanickingTemplateSkipped(t *testing.T) {
	e := newEnv(t)
	counts := guard.NewCounts()
	e.startWith(panicky{bind.WithoutContext(native.New())}, WithCounts(counts))
	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.put(deployJSON("prod", "api", 1, `{"app":"api"}`))
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.waitFor("the panic counted", func() bool { return counts.Get("detector", guard.KindPanic) > 0 })
	if _, _, ok := e.binding(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "api"}); ok {
		t.Errorf("the template whose reconcile panics has a binding")
	}
}

// TestDependencyStaysWithItsParent: a dependency stays required on the
// parent's clusters when the parent's policy is deleted (its binding is
// released and keeps its placement) and when the parent's binding does not
// decode, also after a restart with no last good value: neither removes a
// ConfigMap from under a Deployment that stays.
func TestDependencyStaysWithItsParent(t *testing.T) {
	e := newEnv(t)
	stop := e.start()
	cmRef := e.put(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-config","namespace":"prod"}}`)
	pp := ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment")))
	pp.Spec.PropagateDeps = true
	ppr := e.put(pp)
	e.put(deploymentJSON)
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.schedule(webRef, "m1")
	requiredOnM1 := func() bool {
		b, _, ok := e.binding(cmRef)
		return ok && len(b.Spec.RequiredBy) == 1 && b.Spec.RequiredBy[0].Name == "web-deployment" &&
			len(b.Spec.RequiredBy[0].Clusters) == 1 && b.Spec.RequiredBy[0].Clusters[0].Name == "m1"
	}
	e.waitFor("the ConfigMap required by web on m1", requiredOnM1)

	e.del(ppr)
	e.waitReleased(webRef)
	e.probe("prod", 1)
	if !requiredOnM1() {
		b, _, _ := e.binding(cmRef)
		t.Fatalf("ConfigMap binding after web's policy was deleted = %+v; want it still required by web on m1", b)
	}

	if _, err := e.st.Put(e.ctx, store.BindingKey(webRef), []byte(`{"apiVersion": "broken`)); err != nil {
		t.Fatal(err)
	}
	e.probe("prod", 2)
	if !requiredOnM1() {
		t.Fatalf("ConfigMap binding after web's binding stopped decoding: not required by web on m1 any more")
	}
	stop()
	e.start() // no last good value of web's binding now
	e.probe("prod", 3)
	if !requiredOnM1() {
		b, _, _ := e.binding(cmRef)
		t.Fatalf("ConfigMap binding after a restart with web's binding undecodable = %+v; want it still required by web on m1", b)
	}
}
