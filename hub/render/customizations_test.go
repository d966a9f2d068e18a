package render

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

// reviseRIC revises a Deployment's replicas and marks the object revised,
// so that its rendered work differs from the native revise's.
const reviseRIC = `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":"web-revise"},"spec":{"target":{"apiVersion":"apps/v1","kind":"Deployment"},
"customizations":{"replicaRevision":{"luaScript":"function ReviseReplica(obj, desiredReplica)\n obj.spec.replicas = desiredReplica\n if obj.metadata.annotations == nil then obj.metadata.annotations = {} end\n obj.metadata.annotations['example.com/revised-by'] = 'ric'\n return obj\nend"}}}}`

var ricKey = store.ObjectKey(store.ObjectRef{Group: configv1alpha1.GroupName, Kind: customizations.KindCustomization, Name: "web-revise"})

// TestCustomizationChangeRendersItsKindAgain: with the hub's interpreter
// fed by hub/customizations, creating a customization for Deployments
// renders the Deployment's works again through it, without any change to
// the template or its binding, and deleting it renders them back to the
// same version as before; a template of another kind is not rendered
// again (Karmada #5238).
func TestCustomizationChangeRendersItsKindAgain(t *testing.T) {
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

	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	w, v := e.newWatcher(interp)
	e.startWith(Config{Customizations: w}, interp)
	e.runWatcher(w, v)
	e.waitFor("both works on m1", func() bool { ws, _ := e.current("m1"); return ws[webKey] != nil && ws[cfgKey] != nil })
	before, rev := e.current("m1")
	if revisedBy(t, before[webKey]) != "" || replicasOf(t, before[webKey]) != 2 {
		t.Fatalf("web on m1 before the customization: revised-by %q, replicas %d; want none, 2", revisedBy(t, before[webKey]), replicasOf(t, before[webKey]))
	}

	e.putRaw(ricKey, []byte(reviseRIC))
	changes, next := e.changes("m1", rev)
	after, _ := e.current("m1")
	if got := keysOf(changes); len(got) != 1 || got[0] != webKey {
		t.Errorf("changes on m1 after the customization = %v; want only %s", got, webKey)
	}
	if revisedBy(t, after[webKey]) != "ric" || replicasOf(t, after[webKey]) != 2 {
		t.Errorf("web on m1 after the customization: revised-by %q, replicas %d; want ric, 2", revisedBy(t, after[webKey]), replicasOf(t, after[webKey]))
	}
	if after[cfgKey].GetVersion() != before[cfgKey].GetVersion() {
		t.Errorf("cfg's version changed with a Deployment customization")
	}

	e.del(ricKey)
	changes, _ = e.changes("m1", next)
	back, _ := e.current("m1")
	if got := keysOf(changes); len(got) != 1 || got[0] != webKey {
		t.Errorf("changes on m1 after deleting the customization = %v; want only %s", got, webKey)
	}
	if back[webKey].GetVersion() != before[webKey].GetVersion() {
		t.Errorf("web on m1 after deleting the customization has version %s (revised-by %q); want the original %s",
			back[webKey].GetVersion(), revisedBy(t, back[webKey]), before[webKey].GetVersion())
	}
}

// TestNothingRenderedBeforeCustomizationsLoad: the renderer publishes
// nothing until the stored customizations are loaded, so that the first
// work an agent gets is already rendered with them.
func TestNothingRenderedBeforeCustomizationsLoad(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("m1", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(divided(), 6, target("m1", 6)))
	e.putRaw(ricKey, []byte(reviseRIC))
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	w, v := e.newWatcher(interp)
	e.startWith(Config{Customizations: w}, interp)
	// Absence cannot be polled for; 200 ms is many store round trips.
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	if works, _, err := e.r.Current(ctx, "m1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Current(m1) before the customizations are loaded = %d works, %v; want to wait", len(works), err)
	}
	e.runWatcher(w, v)
	works, _ := e.current("m1")
	if works[webKey] == nil || revisedBy(t, works[webKey]) != "ric" {
		t.Errorf("first published web on m1 = %v; want it revised by the stored customization", works[webKey])
	}
}

// runWatcher runs w until the test ends. It is stopped before the
// renderer (cleanups run last first), whose stop checks that no store
// watch is left.
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

func revisedBy(t *testing.T, up interface{ GetManifests() [][]byte }) string {
	t.Helper()
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(up.GetManifests()[0], &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Metadata.Annotations["example.com/revised-by"]
}

// TestMarkScopeMarksOnlyItsKind: a customization change marks the works
// of the templates of its kind and no other.
func TestMarkScopeMarksOnlyItsKind(t *testing.T) {
	in := newInputs()
	for _, doc := range []string{
		deploymentYAML,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: default}\n",
	} {
		obj := object(t, doc)
		in.templates[work.KeyOf(obj)] = obj
	}
	in.markScope(customizations.TargetScope(configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"}))
	if len(in.dirty) != 1 || in.dirty[webKey] != nil {
		t.Errorf("marked %v; want every cluster of %s only", in.dirty, webKey)
	}
	if _, ok := in.dirty[webKey]; !ok {
		t.Errorf("%s not marked", webKey)
	}
}
