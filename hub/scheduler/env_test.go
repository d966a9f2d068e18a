package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/liveness/livenesstest"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/internal/runtest"
)

// waitTimeout bounds every poll of the integration tests.
const waitTimeout = 20 * time.Second

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{Only: []string{
		"tether/hub/scheduler.", "tether/hub/store.(*Store).Watch", "tether/hub/liveness.(*Leases)", "tether/hub/view.",
	}}))
}

// env is a real embedded etcd, real leases on a fake clock, and the loop.
type env struct {
	t      testing.TB
	ctx    context.Context
	st     *store.Store
	view   *view.View // the replica's view of st, running
	clock  *livenesstest.Clock
	leases *liveness.Leases
}

func newEnv(t testing.TB, leaseDuration time.Duration) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st := etcdtest.Embedded(t)
	clock := livenesstest.NewClock(t0)
	// The fake clock moves in jumps: no pause check (hub/liveness tests it).
	leases := liveness.New(liveness.Config{LeaseDuration: leaseDuration, Clock: clock, PauseThreshold: -1})
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("view.New: %v", err)
	}
	e := &env{t: t, ctx: ctx, st: st, view: v, clock: clock, leases: leases}
	e.goRun("leases", leases.Run)
	e.goRun("view", v.Run)
	return e
}

// goRun runs fn until the test ends or stop is called (runtest.Go).
func (e *env) goRun(what string, fn func(context.Context) error) (stop func()) {
	return runtest.Go(e.t, e.ctx, what, fn)
}

// start runs a loop and returns it with its stop function.
func (e *env) start(cfg Config) (*Loop, func()) {
	e.waitView()
	cfg.Clock = e.clock
	l := New(e.st, e.view, e.leases, cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: testWriter{e.t}}))
	return l, e.goRun("scheduler", l.Run)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// heartbeat renews a Ready lease serving Deployments with 100 pods.
func (e *env) heartbeat(names ...string) {
	for _, n := range names {
		e.leases.Heartbeat(n, &agentv1.Heartbeat{
			Conditions:      []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
			ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "100"}},
			ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		})
	}
}

// keepAlive moves the clock by d in 10 s steps, renewing the leases of
// names at every step, as their agents would.
func (e *env) keepAlive(d time.Duration, names ...string) {
	for step := 10 * time.Second; d > 0; d -= step {
		e.clock.Advance(min(step, d))
		e.heartbeat(names...)
	}
}

// waitState polls until every cluster of names has a lease in state.
func (e *env) waitState(state lease.State, names ...string) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for _, n := range names {
		for {
			if l, ok := e.leases.Get(n); ok && l.State == state {
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("cluster %s never %s", n, state)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// settle waits until the loop has processed the leases and the store as
// they are now and has no timer due on the clock as it is now.
func (e *env) settle(l *Loop) {
	e.t.Helper()
	_, rev := e.leases.List()
	storeRev := e.revision()
	now := e.clock.Now().UnixNano()
	deadline := time.Now().Add(waitTimeout)
	for l.settled.Load() < rev || l.viewSettled.Load() < storeRev || (l.armed.Load() != 0 && l.armed.Load() <= now) {
		if time.Now().After(deadline) {
			e.t.Fatalf("loop processed lease revision %d, store revision %d; want %d, %d", l.settled.Load(), l.viewSettled.Load(), rev, storeRev)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitView waits until the view holds the store as it is now, as a
// replica's controllers start on a synced view.
func (e *env) waitView() {
	e.t.Helper()
	rev := e.revision()
	deadline := time.Now().Add(waitTimeout)
	for e.view.Revision() < rev {
		if time.Now().After(deadline) {
			e.t.Fatalf("view at revision %d; want %d", e.view.Revision(), rev)
		}
		time.Sleep(time.Millisecond)
	}
}

func (e *env) putCluster(name string, taints ...corev1.Taint) {
	c := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
	if _, err := e.st.Put(e.ctx, store.ClusterKey(name), []byte(place.JSONString(c))); err != nil {
		e.t.Fatalf("put cluster %s: %v", name, err)
	}
}

var webRef = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}

func (e *env) putBinding(ref store.ObjectRef, b *workv1alpha1.ResourceBinding) {
	if _, err := e.st.Put(e.ctx, store.BindingKey(ref), []byte(place.JSONString(b))); err != nil {
		e.t.Fatalf("put binding: %v", err)
	}
}

func (e *env) getBinding(ref store.ObjectRef) (*workv1alpha1.ResourceBinding, int64) {
	kv, err := e.st.Get(e.ctx, store.BindingKey(ref))
	if err != nil {
		e.t.Fatalf("get binding: %v", err)
	}
	b := &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(kv.Value, b); err != nil {
		e.t.Fatalf("decode binding: %v", err)
	}
	return b, kv.Revision
}

// updateBinding modifies the stored binding, retrying on conflicts.
func (e *env) updateBinding(ref store.ObjectRef, modify func(*workv1alpha1.ResourceBinding)) {
	for {
		b, rev := e.getBinding(ref)
		modify(b)
		_, err := e.st.Update(e.ctx, store.BindingKey(ref), []byte(place.JSONString(b)), rev)
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrConflict) {
			e.t.Fatalf("update binding: %v", err)
		}
	}
}

// waitBinding polls the stored binding until cond holds.
func (e *env) waitBinding(ref store.ObjectRef, what string, cond func(*workv1alpha1.ResourceBinding) bool) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		b, _ := e.getBinding(ref)
		if cond(b) {
			return b
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s; binding: %s", what, place.JSONString(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// revision is the store's current revision.
func (e *env) revision() int64 {
	_, rev, err := e.st.List(e.ctx, store.BindingsPrefix)
	if err != nil {
		e.t.Fatalf("list: %v", err)
	}
	return rev
}

// waitPasses waits until the loop has finished n processing passes.
func (e *env) waitPasses(l *Loop, n uint64) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for l.passes.Load() < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("loop did %d passes; want %d", l.passes.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
