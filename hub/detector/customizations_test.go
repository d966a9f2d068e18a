package detector

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

// widgetRIC gives Widgets replicas (spec.size) and a ConfigMap dependency
// (<name>-config).
const widgetRIC = `{"apiVersion":"config.tether.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":"widgets"},"spec":{"target":{"apiVersion":"example.com/v1","kind":"Widget"},
"customizations":{
"replicaResource":{"luaScript":"function GetReplicas(obj)\n return obj.spec.size, nil\nend"},
"dependencyInterpretation":{"luaScript":"function GetDependencies(obj)\n return {{apiVersion='v1', kind='ConfigMap', namespace=obj.metadata.namespace, name=obj.metadata.name .. '-config'}}\nend"}}}}`

// TestCustomizationChangeReinterpretsItsKind: with the hub's interpreter
// fed by hub/customizations, creating a customization for a kind gives
// its templates' bindings the replicas and dependencies it interprets,
// without any change to the templates; deleting it takes them back.
func TestCustomizationChangeReinterpretsItsKind(t *testing.T) {
	e := newEnv(t)
	pp := ppObj("default", "widgets", 0, []policyv1alpha1.ResourceSelector{selAll("example.com/v1", "Widget")})
	pp.Spec.PropagateDeps = true
	e.put(pp)
	widget := e.put(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":3}}`)
	config := e.put(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w-config","namespace":"default"},"data":{"k":"v"}}`)

	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	w, v := e.newWatcher(interp)
	e.startWith(interp, WithCustomizations(w))
	e.runWatcher(w, v)
	if b := e.waitClaim(widget, &bind.PolicyRef{Namespace: "default", Name: "widgets"}); b.Spec.Replicas != 0 {
		t.Fatalf("widget binding without a customization has %d replicas; want 0", b.Spec.Replicas)
	}
	e.schedule(widget, "m1")
	if _, _, ok := e.binding(config); ok {
		t.Fatalf("w-config has a binding without a customization naming it a dependency")
	}

	ric := e.put(widgetRIC)
	e.waitFor("the widget binding to get 3 replicas", func() bool { b, _, _ := e.binding(widget); return b.Spec.Replicas == 3 })
	e.waitFor("w-config to be attached to the widget", func() bool {
		b, _, ok := e.binding(config)
		return ok && len(b.Spec.RequiredBy) == 1 && b.Spec.RequiredBy[0].Name == "w-widget"
	})

	e.del(ric)
	e.waitFor("the widget binding back to 0 replicas", func() bool { b, _, _ := e.binding(widget); return b.Spec.Replicas == 0 })
	e.waitGone(config)
}

// TestNothingDetectedBeforeCustomizationsLoad: the detector writes no
// binding until the stored customizations are loaded, so that the first
// binding already has the replicas they interpret.
func TestNothingDetectedBeforeCustomizationsLoad(t *testing.T) {
	e := newEnv(t)
	e.put(ppObj("default", "widgets", 0, []policyv1alpha1.ResourceSelector{selAll("example.com/v1", "Widget")}))
	widget := e.put(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":3}}`)
	e.put(widgetRIC)
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	w, v := e.newWatcher(interp)
	e.startWith(interp, WithCustomizations(w))
	// Absence cannot be polled for; 200 ms is many store round trips.
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if b, _, ok := e.binding(widget); ok {
			t.Fatalf("binding written before the customizations are loaded, with %d replicas", b.Spec.Replicas)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.runWatcher(w, v)
	b := e.waitClaim(widget, &bind.PolicyRef{Namespace: "default", Name: "widgets"})
	if _, rev, _ := e.binding(widget); b.Spec.Replicas != 3 || rev != e.createRevision(widget) {
		t.Errorf("first binding has %d replicas (written more than once: %v); want 3, written once", b.Spec.Replicas, rev != e.createRevision(widget))
	}
}

func (e *env) createRevision(ref store.ObjectRef) int64 {
	e.t.Helper()
	kv, err := e.st.Get(e.ctx, store.BindingKey(ref))
	if err != nil {
		e.t.Fatal(err)
	}
	return kv.CreateRevision
}

// TestMarkScopeMarksOnlyItsKind: a customization change marks the
// templates of its kind and no other.
func TestMarkScopeMarksOnlyItsKind(t *testing.T) {
	d := &Detector{idx: newIndex(), dirty: map[store.ObjectRef]bind.Cause{}}
	for _, doc := range []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"default"}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"b","namespace":"other"}}`,
		`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"c","namespace":"default"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`,
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		ref := refOf(u)
		ref.Name += "-" + u.GroupVersionKind().Version // c and a differ only in version
		d.idx.templates[ref] = &bind.Template{Ref: ref, Obj: u}
	}
	d.markScope(customizations.TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "example.com/v1", Kind: "Widget"}))
	var got []string
	for ref := range d.dirty {
		got = append(got, ref.Namespace+"/"+ref.Name)
	}
	if len(got) != 2 || !d.marked("default", "a-v1") || !d.marked("other", "b-v1") {
		t.Errorf("marked %v; want default/a-v1 and other/b-v1 only", got)
	}
}

func (d *Detector) marked(ns, name string) bool {
	for ref := range d.dirty {
		if ref.Namespace == ns && ref.Name == name {
			return true
		}
	}
	return false
}

// runWatcher runs w until the test ends. Started after the detector, it
// is stopped before it (cleanups run last first), so that the detector's
// goroutine count does not see it.
// newWatcher is a customizations watcher over a view of its own of the
// store; runWatcher runs both.
func (e *env) newWatcher(interp customizations.Target) (*customizations.Watcher, *view.View) {
	e.t.Helper()
	v, err := view.New(e.st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		e.t.Fatalf("view.New: %v", err)
	}
	return customizations.New(v, interp, hclog.NewNullLogger()), v
}

func (e *env) runWatcher(w *customizations.Watcher, v *view.View) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 2)
	go func() { done <- v.Run(ctx) }()
	go func() { done <- w.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				e.t.Errorf("customizations Run = %v; want nil after cancel", err)
			}
		}
	})
}
