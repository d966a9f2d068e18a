package render

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/hub/view"
)

var _ agentapi.Works = (*Renderer)(nil)

// waitTimeout bounds every wait of the integration tests.
const waitTimeout = 20 * time.Second

// env is a real embedded etcd and a Renderer running on it.
type env struct {
	t   testing.TB
	st  *store.Store
	ctx context.Context
	r   *Renderer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{t: t, st: st, ctx: ctx}
}

// start runs a Renderer until the test ends; stopping it waits for Run to
// return and for every goroutine it started to exit.
func (e *env) start() {
	e.t.Helper()
	e.startWith(Config{}, testInterpreter(e.t)) // built once, outlives the test
}

// startWith is start with a configuration and an interpreter.
func (e *env) startWith(cfg Config, interp work.Interpreter) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: testWriter{e.t}})
	v, err := view.New(e.st, view.HubPrefixes(), logger)
	if err != nil {
		e.t.Fatalf("view.New: %v", err)
	}
	e.r = New(v, interp, cfg, logger)
	done := make(chan error, 2)
	go func() { done <- v.Run(ctx) }()
	go func() { done <- e.r.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				e.t.Errorf("Run = %v; want nil after cancel", err)
			}
		}
		e.waitFor("the renderer's goroutines to exit", func() bool { return ownedGoroutines() == "" })
	})
}

// ownedGoroutines returns the stacks of the goroutines that Run owns (its
// loop, the view's and the store watch it started), empty when none is
// left. The etcd client's and server's own goroutines live as long as the
// store.
func ownedGoroutines() string {
	buf := make([]byte, 8<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "hub/render.(*Renderer)") || strings.Contains(g, "hub/view.(*View)") ||
			strings.Contains(g, "hub/store.(*Store).Watch") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) putRaw(key string, value []byte) {
	e.t.Helper()
	if _, err := e.st.Put(e.ctx, key, value); err != nil {
		e.t.Fatalf("put %s: %v", key, err)
	}
}

func (e *env) del(key string) {
	e.t.Helper()
	if _, err := e.st.Delete(e.ctx, key, 0); err != nil {
		e.t.Fatalf("delete %s: %v", key, err)
	}
}

func templateRef(obj *unstructured.Unstructured) store.ObjectRef {
	gvk := obj.GroupVersionKind()
	return store.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

func (e *env) putTemplate(obj *unstructured.Unstructured) {
	e.t.Helper()
	e.putRaw(store.ObjectKey(templateRef(obj)), toJSON(e.t, obj.Object))
}

// putBinding stores b as the binding of template.
func (e *env) putBinding(template *unstructured.Unstructured, b *workv1alpha1.ResourceBinding) {
	e.t.Helper()
	e.putRaw(store.BindingKey(templateRef(template)), toJSON(e.t, b))
}

func (e *env) putCluster(c *clusterv1alpha1.Cluster) {
	e.t.Helper()
	e.putRaw(store.ClusterKey(c.Name), toJSON(e.t, c))
}

func overrideKey(p policyv1alpha1.OverridePolicy) string {
	return store.ObjectKey(store.ObjectRef{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindOverridePolicy, Namespace: p.Namespace, Name: p.Name})
}

func (e *env) putOverride(p policyv1alpha1.OverridePolicy) {
	e.t.Helper()
	e.putRaw(overrideKey(p), toJSON(e.t, p))
}

// current returns the cluster's works by key and the revision.
func (e *env) current(cluster string) (map[string]*agentv1.WorkUpsert, int64) {
	e.t.Helper()
	works, rev, err := e.r.Current(e.ctx, cluster)
	if err != nil {
		e.t.Fatalf("Current(%s): %v", cluster, err)
	}
	out := map[string]*agentv1.WorkUpsert{}
	for _, w := range works {
		out[w.GetWorkKey()] = w
	}
	return out, rev
}

// waitChanges waits until the cluster's works changed after rev (or ctx
// ends), as an agent stream's send loop does, and returns Changes then.
func waitChanges(ctx context.Context, r *Renderer, cluster string, rev int64) ([]syncstate.Change, int64, error) {
	for {
		ch, next, wake, err := r.Changes(ctx, cluster, rev)
		if err != nil || len(ch) > 0 {
			return ch, next, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, rev, ctx.Err()
		}
	}
}

// changes waits for the cluster's changes after rev.
func (e *env) changes(cluster string, rev int64) ([]syncstate.Change, int64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	ch, next, err := waitChanges(ctx, e.r, cluster, rev)
	if err != nil {
		e.t.Fatalf("Changes(%s, %d): %v", cluster, rev, err)
	}
	return ch, next
}

// noChanges checks that the cluster gets no change after rev within a
// short while. (Absence cannot be polled for; 200 ms is many store
// round trips.)
func (e *env) noChanges(cluster string, rev int64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	ch, _, err := waitChanges(ctx, e.r, cluster, rev)
	if !errors.Is(err, context.DeadlineExceeded) {
		e.t.Errorf("Changes(%s, %d) = %v, %v; want no change", cluster, rev, keysOf(ch), err)
	}
}

// settle waits until the renderer has published everything stored so far.
func (e *env) settle() {
	e.t.Helper()
	_, rev, err := e.st.List(e.ctx, store.Root+"meta/")
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	e.waitFor("the renderer to publish", func() bool { return e.r.Stats().StoreRevision >= rev })
}

func keysOf(changes []syncstate.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Key)
	}
	slices.Sort(out)
	return out
}
