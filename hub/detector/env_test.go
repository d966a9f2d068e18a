package detector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// waitTimeout bounds every poll of the integration tests.
const waitTimeout = 20 * time.Second

// env is a real embedded etcd and the detector running on it.
type env struct {
	t   testing.TB
	st  *store.Store
	ctx context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{t: t, st: st, ctx: ctx}
}

// start runs a detector until the returned stop is called (or the test
// ends). stop waits for Run to return and checks that every goroutine the
// detector started has exited.
func (e *env) start(opts ...Option) (stop func()) {
	e.t.Helper()
	return e.startWith(bind.WithoutContext(native.New()), opts...)
}

// startWith is start with another interpreter.
func (e *env) startWith(interp bind.Interpreter, opts ...Option) (stop func()) {
	e.t.Helper()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(e.ctx)
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: testWriter{e.t}})
	v, err := view.New(e.st, view.HubPrefixes(), logger)
	if err != nil {
		e.t.Fatalf("view.New: %v", err)
	}
	done := make(chan error, 2)
	go func() { done <- v.Run(ctx) }()
	e.waitView(v) // the replica's view holds the store before its leader's detector starts
	d := New(e.st, v, interp, logger, opts...)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				e.t.Errorf("Run = %v; want nil after cancel", err)
			}
		}
		e.waitFor("detector goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
	}
	e.t.Cleanup(stop)
	return stop
}

// waitView waits until v holds the store as it is now.
func (e *env) waitView(v *view.View) {
	e.t.Helper()
	rev, err := e.st.Revision(e.ctx)
	if err != nil {
		e.t.Fatalf("store revision: %v", err)
	}
	e.waitFor("the view to hold the store", func() bool { return v.Revision() >= rev })
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// waitFor polls cond until it holds or waitTimeout passes.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// put stores an object (a map, a typed policy or a JSON string) at its key.
func (e *env) put(obj any) store.ObjectRef {
	e.t.Helper()
	data, ok := obj.(string)
	raw := []byte(data)
	if !ok {
		raw = mustJSON(e.t, obj)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		e.t.Fatalf("decode %s: %v", raw, err)
	}
	ref := refOf(u)
	if _, err := e.st.Put(e.ctx, store.ObjectKey(ref), raw); err != nil {
		e.t.Fatalf("put %v: %v", ref, err)
	}
	return ref
}

func refOf(u *unstructured.Unstructured) store.ObjectRef {
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	group := gv.Group
	if group == policyv1alpha1.KarmadaGroupName {
		group = policyv1alpha1.GroupName
	}
	return store.ObjectRef{Group: group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func (e *env) del(ref store.ObjectRef) {
	e.t.Helper()
	if _, err := e.st.Delete(e.ctx, store.ObjectKey(ref), 0); err != nil {
		e.t.Fatalf("delete %v: %v", ref, err)
	}
}

// binding returns the stored binding of ref and its revision; ok is false
// when there is none.
func (e *env) binding(ref store.ObjectRef) (b *workv1alpha1.ResourceBinding, rev int64, ok bool) {
	e.t.Helper()
	kv, err := e.st.Get(e.ctx, store.BindingKey(ref))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, false
	}
	if err != nil {
		e.t.Fatalf("get binding %v: %v", ref, err)
	}
	b = &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(kv.Value, b); err != nil {
		e.t.Fatalf("decode binding %v: %v", ref, err)
	}
	return b, kv.Revision, true
}

// waitClaim waits until ref's binding is claimed by policy (nil: has no
// claim) and returns it.
func (e *env) waitClaim(ref store.ObjectRef, policy *bind.PolicyRef) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	var got *workv1alpha1.ResourceBinding
	e.waitFor(fmt.Sprintf("binding of %s claimed by %v", refString(ref), policy), func() bool {
		b, _, ok := e.binding(ref)
		if !ok {
			return false
		}
		c := bind.ClaimOf(b)
		got = b
		return (policy == nil && c == nil) || (policy != nil && c != nil && c.Policy == *policy)
	})
	return got
}

func (e *env) waitGone(ref store.ObjectRef) {
	e.t.Helper()
	e.waitFor("no binding for "+refString(ref), func() bool {
		_, _, ok := e.binding(ref)
		return !ok
	})
}

// probe stores a template that only the policy zz-probe (created on first
// use) matches and waits for its binding. Its key sorts after every other
// template's (group zz.example.io), so once it is bound every earlier
// event has been reconciled, except dependencies marked in that pass.
func (e *env) probe(ns string, n int) {
	e.t.Helper()
	e.put(ppObj(ns, "zz-probe", 0, []policyv1alpha1.ResourceSelector{selAll("zz.example.io/v1", "Probe")}))
	ref := e.put(fmt.Sprintf(`{"apiVersion":"zz.example.io/v1","kind":"Probe","metadata":{"name":"p%d","namespace":%q}}`, n, ns))
	e.waitClaim(ref, &bind.PolicyRef{Namespace: ns, Name: "zz-probe"})
}

// ppObj is a PropagationPolicy (ns non-empty) or ClusterPropagationPolicy.
func ppObj(ns, name string, prio int32, sels []policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindPropagationPolicy},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
	if ns == "" {
		p.Kind = policyv1alpha1.KindClusterPropagationPolicy
	}
	p.Spec.Priority = &prio
	p.Spec.ResourceSelectors = sels
	return p
}

// deployJSON is a Deployment with replicas and labels.
func deployJSON(ns, name string, replicas int, labels string) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"labels":%s},
	"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},
	"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}}}`,
		name, ns, labels, replicas, name, name)
}

// revisions returns the revision of every binding.
func (e *env) revisions() map[string]int64 {
	e.t.Helper()
	kvs, _, err := e.st.List(e.ctx, store.BindingsPrefix)
	if err != nil {
		e.t.Fatalf("list bindings: %v", err)
	}
	out := map[string]int64{}
	for _, kv := range kvs {
		out[kv.Key] = kv.Revision
	}
	return out
}

// waitReleased waits until ref's binding exists without a claim and with
// its placement: a policy deleted or no longer matching released it.
func (e *env) waitReleased(ref store.ObjectRef) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	var b *workv1alpha1.ResourceBinding
	e.waitFor("binding of "+refString(ref)+" released (kept, no claim)", func() bool {
		var ok bool
		b, _, ok = e.binding(ref)
		return ok && bind.ClaimOf(b) == nil && b.Spec.Placement != nil
	})
	return b
}

// schedule writes clusters into ref's binding, as the scheduler would.
func (e *env) schedule(ref store.ObjectRef, clusters ...string) {
	e.t.Helper()
	b, rev, ok := e.binding(ref)
	if !ok {
		e.t.Fatalf("schedule %s: no binding", refString(ref))
	}
	b.Spec.Clusters = nil
	for _, c := range clusters {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: c, Replicas: 1})
	}
	if _, err := e.st.Update(e.ctx, store.BindingKey(ref), mustJSON(e.t, b), rev); err != nil {
		e.t.Fatalf("schedule %s: %v", refString(ref), err)
	}
}
