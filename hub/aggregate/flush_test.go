package aggregate

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// gateWait is how long one AggregateStatus call of gated waits for a
// second one to run beside it before it goes on alone.
const gateWait = 2 * time.Second

// gated is an Interpreter whose AggregateStatus calls wait (up to
// gateWait) until two run at once, and which records the most that ran at
// once.
type gated struct {
	Interpreter
	mu       sync.Mutex // guards inFlight and most
	inFlight int
	most     int
	two      chan struct{} // closed once two calls ran at once
}

func (g *gated) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	g.mu.Lock()
	g.inFlight++
	if g.inFlight > g.most {
		g.most = g.inFlight
		if g.most == 2 {
			close(g.two)
		}
	}
	g.mu.Unlock()
	select {
	case <-g.two:
	case <-time.After(gateWait):
	}
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	return g.Interpreter.AggregateStatus(ctx, obj, items)
}

func (g *gated) mostAtOnce() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// TestFlushWritesBindingsConcurrently: one flush pass aggregates and
// writes its dirty bindings several at a time, not one after the other,
// so a status waits for one pass of round trips to etcd, not for one per
// binding ahead of it; every binding still gets its status.
func TestFlushWritesBindingsConcurrently(t *testing.T) {
	const n = 6
	e := newEnv(t)
	refs := make([]store.ObjectRef, n)
	for i := range refs {
		refs[i] = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: fmt.Sprintf("web-%d", i)}
		tmpl := deployment(t)
		tmpl.SetName(refs[i].Name)
		e.put(store.ObjectKey(refs[i]), tmpl.Object)
		b := webBinding("m1")
		b.Name, b.Spec.Resource.Name = refs[i].Name+"-deployment", refs[i].Name
		e.put(store.BindingKey(refs[i]), b)
	}
	e.heartbeat("m1")
	g := &gated{Interpreter: newInterpreter(t), two: make(chan struct{})}
	a := New(e.st, g, e.leases, Config{Clock: e.clock, View: e.view}, hclog.NewNullLogger())
	e.goRun("relay", a.Relay)
	e.goRun("aggregate", a.Run)
	for _, ref := range refs {
		key := "apps/Deployment/prod/" + ref.Name
		r := &agentv1.StatusReport{WorkKey: key, Version: "v1", Digest: "d", Manifests: []*agentv1.ManifestStatus{
			manifest(ref.Name, agentv1.Health_HEALTH_HEALTHY, true, memberStatus(3))}}
		if err := a.Report(e.ctx, "m1", r); err != nil {
			t.Fatalf("Report(%s): %v", key, err)
		}
	}
	for _, ref := range refs {
		e.waitBinding(ref, ref.Name+" readyReplicas 3", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	}
	if got := g.mostAtOnce(); got < 2 {
		t.Fatalf("at most %d AggregateStatus calls ran at once over %d dirty bindings; want several", got, n)
	}
}
