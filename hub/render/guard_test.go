package render

import (
	"context"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
)

// TestUndecodableInputsKeepWorks: a template or a binding whose stored
// value stops decoding is not taken as deleted: every cluster keeps the
// work it has and is sent nothing. Before, the work was removed (a delete
// sent to every member).
func TestUndecodableInputsKeepWorks(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	counts := guard.NewCounts()
	e.startWith(Config{Counts: counts}, testInterpreter(t))
	before, revA := e.current("a")
	e.putRaw(store.ObjectKey(templateRef(named(t, "web"))), []byte(`{"apiVersion":`))
	e.putRaw(store.BindingKey(templateRef(named(t, "api"))), []byte(`not json`))
	e.settle()
	after, _ := e.current("a")
	for _, key := range []string{webKey, apiKey} {
		if after[key] == nil || after[key].GetVersion() != before[key].GetVersion() {
			t.Errorf("Current(a)[%s] after its input stopped decoding = %v; want version %s kept", key, after[key], before[key].GetVersion())
		}
	}
	e.noChanges("a", revA)
	if got := counts.Get("render", guard.KindDecode); got != 2 {
		t.Errorf("decode errors counted = %d; want 2", got)
	}
}

// authority is a fixed answer of Config.Authority.
type authority struct{ ok bool }

func (a authority) Authoritative() (bool, string) { return a.ok, "test: store regressed" }

// TestNotAuthoritativeRemovesNothing: while the hub is not authoritative,
// a deleted template or a binding that drops a cluster removes no work,
// and Gone vouches for no held key.
func TestNotAuthoritativeRemovesNothing(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	e.startWith(Config{Authority: authority{ok: false}}, testInterpreter(t))
	_, revA := e.current("a")
	_, revB := e.current("b")
	e.del(store.ObjectKey(templateRef(named(t, "api"))))
	web := named(t, "web")
	b := binding(duplicated(), 6, target("a", 6))
	b.Name = "web-deployment"
	e.putBinding(web, b)
	e.settle()
	for cluster, rev := range map[string]int64{"a": revA, "b": revB} {
		works, _ := e.current(cluster)
		if works[webKey] == nil || works[apiKey] == nil {
			t.Errorf("Current(%s) = %v; want %s and %s kept", cluster, keysOfWorks(works), webKey, apiKey)
		}
		e.noChanges(cluster, rev)
	}
	if gone, err := e.r.Gone(e.ctx, "c", []string{webKey, apiKey}); err != nil || len(gone) != 0 {
		t.Errorf("Gone(c) = %v, %v; want none while not authoritative", summarize(gone), err)
	}
}

func keysOfWorks[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// panicky panics when it revises the replicas of a template named api.
type panicky struct{ work.Interpreter }

func (p panicky) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, error) {
	if obj.GetName() == "api" {
		panic("test: bad data in api")
	}
	return p.Interpreter.ReviseReplica(ctx, obj, n)
}

// TestPanickingKeySkipped: a template whose render panics is skipped (and
// counted); the other templates are rendered and the renderer goes on.
func TestPanickingKeySkipped(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	for _, name := range []string{"web", "api"} {
		tmpl := named(t, name)
		b := binding(divided(), 2, target("a", 2))
		b.Name = name + "-deployment"
		e.putTemplate(tmpl)
		e.putBinding(tmpl, b)
	}
	counts := guard.NewCounts()
	e.startWith(Config{Counts: counts}, panicky{testInterpreter(t)})
	works, _ := e.current("a")
	if works[webKey] == nil || works[apiKey] != nil {
		t.Errorf("Current(a) = %v; want only %s", keysOfWorks(works), webKey)
	}
	e.waitFor("the panic to be counted", func() bool { return counts.Get("render", guard.KindPanic) > 0 })
	cfg := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {k: v}\n")
	e.putTemplate(cfg)
	e.putBinding(cfg, binding(duplicated(), 0, target("a", 0)))
	e.waitFor("a later template rendered", func() bool { w, _ := e.current("a"); return w[cfgKey] != nil })
}

// panicOnApply makes the renderer panic while it applies the stored object
// at key whenever armed is set, until the test ends (applyFault: what the
// renderfault build's ApplyPanicKeyEnv does in a real hub). Call it before
// the renderer starts; arm and disarm through the returned flag.
func panicOnApply(t *testing.T, key string) *atomic.Bool {
	armed := new(atomic.Bool)
	t.Cleanup(func() { applyFault = func(string) {} })
	applyFault = func(k string) {
		if k == key && armed.Load() {
			panic("test: applying " + k + " panics")
		}
	}
	return armed
}

// TestPanickingApplyOnListIsUnknown: a hub (re)starts and applying web's
// binding from the list panics. The binding is unknown, not absent: the
// renderer is not authoritative (so no SyncDone lets an agent delete web)
// and web, once its binding applies, renders again. Before, the panic
// skipped the object: web was simply missing from an authoritative view
// and every agent that held it deleted it.
func TestPanickingApplyOnListIsUnknown(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	armed := panicOnApply(t, store.BindingKey(templateRef(web)))
	armed.Store(true)
	e.start()
	e.current("a") // the list is applied
	if e.r.Authoritative("a") {
		t.Fatal("Authoritative(a) = true after web's binding panicked on apply; want false")
	}
	armed.Store(false)
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	e.waitFor("authoritative once the binding applies", func() bool { return e.r.Authoritative("a") })
	if works, _ := e.current("a"); works[webKey] == nil {
		t.Errorf("Current(a) = %v; want web once its binding applies", keysOfWorks(works))
	}
}

// TestPanickingApplyKeepsWorks: a binding update that would take web off
// cluster a panics while it is applied. web stays on a, Gone keeps it,
// and the renderer is not authoritative until the binding applies.
func TestPanickingApplyKeepsWorks(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	e.putCluster(cluster("b", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	armed := panicOnApply(t, store.BindingKey(templateRef(web)))
	e.start()
	if works, _ := e.current("a"); works[webKey] == nil {
		t.Fatalf("Current(a) = %v; want web before the fault", keysOfWorks(works))
	}
	armed.Store(true)
	e.putBinding(web, binding(duplicated(), 6, target("b", 6)))
	e.waitFor("not authoritative", func() bool { return !e.r.Authoritative("a") })
	if works, _ := e.current("a"); works[webKey] == nil {
		t.Errorf("Current(a) = %v; want web kept while its binding is unknown", keysOfWorks(works))
	}
	gone, err := e.r.Gone(e.ctx, "a", []string{webKey})
	if err != nil || len(gone) != 1 || !gone[0].Keep {
		t.Errorf("Gone(a, web) = %+v, %v; want Keep", gone, err)
	}
}
