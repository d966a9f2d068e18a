package aggregate

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/liveness/livenesstest"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/internal/runtest"
)

const waitTimeout = 20 * time.Second

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{Only: []string{
		"tether/hub/aggregate.", "tether/hub/store.(*Store).Watch", "tether/hub/liveness.(*Leases)",
	}}))
}

type env struct {
	t      *testing.T
	ctx    context.Context
	st     *store.Store
	clock  *livenesstest.Clock
	leases *liveness.Leases
	view   *view.View // of st, running
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st := etcdtest.Embedded(t)
	clock := livenesstest.NewClock(t0)
	e := &env{t: t, ctx: ctx, st: st, clock: clock, leases: liveness.New(liveness.Config{LeaseDuration: 40 * time.Second, Clock: clock, PauseThreshold: -1})}
	e.goRun("leases", e.leases.Run)
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	e.view = v
	e.goRun("view", v.Run)
	return e
}

// goRun runs fn until the test ends or stop is called (runtest.Go).
func (e *env) goRun(what string, fn func(context.Context) error) (stop func()) {
	return runtest.Go(e.t, e.ctx, what, fn)
}

// start runs an aggregator as a single hub does: Relay and Run. stop
// stops both.
func (e *env) start(cfg Config) (a *Aggregator, stop func()) {
	cfg.Clock, cfg.View = e.clock, e.view
	a = New(e.st, newInterpreter(e.t), e.leases, cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: testWriter{e.t}}))
	stopRelay := e.goRun("relay", a.Relay)
	stopRun := e.goRun("aggregate", a.Run)
	return a, func() { stopRun(); stopRelay() }
}

// waitDigests waits until a's digests of cluster are want.
func (e *env) waitDigests(a *Aggregator, cluster string, want map[string]syncstate.Digest) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got, err := a.Digests(e.ctx, cluster)
		if err != nil {
			e.t.Fatalf("Digests(%s): %v", cluster, err)
		}
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("Digests(%s) = %v; want %v", cluster, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (e *env) heartbeat(names ...string) {
	for _, n := range names {
		e.leases.Heartbeat(n, &agentv1.Heartbeat{})
	}
}

func (e *env) put(key string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.st.Put(e.ctx, key, data); err != nil {
		e.t.Fatalf("put %s: %v", key, err)
	}
}

func (e *env) getBinding(ref store.ObjectRef) *workv1alpha1.ResourceBinding {
	kv, err := e.st.Get(e.ctx, store.BindingKey(ref))
	if err != nil {
		e.t.Fatalf("get binding: %v", err)
	}
	b := &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal(kv.Value, b); err != nil {
		e.t.Fatalf("decode binding: %v", err)
	}
	return b
}

// bindingRevision is the store revision of ref's binding's last write.
func (e *env) bindingRevision(ref store.ObjectRef) int64 {
	kv, err := e.st.Get(e.ctx, store.BindingKey(ref))
	if err != nil {
		e.t.Fatalf("get binding: %v", err)
	}
	return kv.Revision
}

func (e *env) waitBinding(ref store.ObjectRef, what string, cond func(*workv1alpha1.ResourceBinding) bool) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		b := e.getBinding(ref)
		if cond(b) {
			return b
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s; binding: %s", what, must(json.Marshal(b)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) revision() int64 {
	_, rev, err := e.st.List(e.ctx, store.BindingsPrefix)
	if err != nil {
		e.t.Fatalf("list: %v", err)
	}
	return rev
}

// viewObject is the view's object of a binding stored at rev as data.
func viewObject(t testing.TB, key string, data []byte, rev int64) *view.Object {
	t.Helper()
	v, err := view.Bindings(key, data)
	if err != nil {
		t.Fatal(err)
	}
	return &view.Object{Key: key, Revision: rev, Size: len(data), Value: v}
}

// load gives a the stored bindings as a full batch of the view, as Run
// does, and returns its revision.
func (e *env) load(a *Aggregator) int64 {
	e.t.Helper()
	kvs, rev, err := e.st.List(e.ctx, store.BindingsPrefix)
	if err != nil {
		e.t.Fatal(err)
	}
	batch := view.Batch{Revision: rev, Full: true}
	for _, kv := range kvs {
		batch.Changes = append(batch.Changes, view.Change{Key: kv.Key, Object: viewObject(e.t, kv.Key, kv.Value, kv.Revision)})
	}
	a.applyBatch(batch)
	return rev
}
