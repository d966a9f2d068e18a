package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/runtest"
)

// BenchmarkRestartHeap reports what a restarted single hub's aggregator
// (Config.Local: nothing held) keeps on the heap, MiB retained, and
// allocates, MiB alloc, while it loads and flushes bindings written
// before the restart: 100 Deployments Duplicated to 500 clusters, each
// with a Healthy item per cluster. The store, the leases and the
// template are on the heap before it is measured.
func BenchmarkRestartHeap(b *testing.B) {
	const bindings, clusters = 100, 500
	st := etcdtest.Embedded(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	names := putRestartBindings(b, ctx, st, bindings, clusters)
	leases := liveness.New(liveness.Config{LeaseDuration: time.Hour, PauseThreshold: -1})
	runtest.Go(b, ctx, "leases", leases.Run)
	for _, n := range names {
		leases.Heartbeat(n, nil)
	}
	deps := startRestartDeps(b, ctx, st)
	settle(b, ctx, st, leases, deps, bindings)
	var retained, alloc float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a := New(st, newInterpreter(b), leases, restartConfig(deps), hclog.NewNullLogger())
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Run(rctx) }()
		waitPasses(b, a, bindings)
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(a)
		if w := a.run.writes.Load(); w != 0 {
			b.Fatalf("restart wrote %d bindings; want none (nothing changed)", w)
		}
		retained = float64(after.HeapAlloc) - float64(before.HeapAlloc)
		alloc = float64(after.TotalAlloc - before.TotalAlloc)
	}
	b.ReportMetric(retained/(1<<20), "MiB-retained")
	b.ReportMetric(alloc/(1<<20), "MiB-alloc")
}

// settle runs an aggregator over the stored bindings until it has
// written their template statuses, as the hub before the restart had.
func settle(b *testing.B, ctx context.Context, st *store.Store, leases *liveness.Leases, deps restartDeps, n int) {
	a := New(st, newInterpreter(b), leases, restartConfig(deps), hclog.NewNullLogger())
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(rctx) }()
	waitPasses(b, a, n)
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if w := a.run.writes.Load(); w != uint64(n) {
		b.Fatalf("settling wrote %d bindings; want %d", w, n)
	}
}

// waitPasses waits until a's Run has made at least one flush pass and
// then none for a second: nothing is dirty any more.
func waitPasses(b *testing.B, a *Aggregator, _ int) {
	deadline := time.Now().Add(2 * time.Minute)
	last, since := uint64(0), time.Now()
	for {
		p := a.run.passes.Load()
		if p != last {
			last, since = p, time.Now()
		}
		if p > 0 && time.Since(since) > time.Second {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("still flushing after 2m (%d passes)", p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// putRestartBindings stores the template and n bindings Duplicated to
// clusters clusters, each item Healthy as an aggregator wrote it, and
// returns the clusters' names.
func putRestartBindings(b *testing.B, ctx context.Context, st *store.Store, n, clusters int) []string {
	var names []string
	for c := range clusters {
		names = append(names, fmt.Sprintf("member-%04d", c))
	}
	tmpl, err := json.Marshal(deployment(b).Object)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		ref := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: fmt.Sprintf("web-%03d", i)}
		if _, err := st.Put(ctx, store.ObjectKey(ref), tmpl); err != nil {
			b.Fatal(err)
		}
		bd := webBinding(names...)
		bd.Name = ref.Name + "-deployment"
		bd.Spec.Resource.Name = ref.Name
		for _, c := range names {
			bd.Status.AggregatedStatus = append(bd.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
				ClusterName: c, Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(memberStatus(3))})
		}
		if _, err := st.Put(ctx, store.BindingKey(ref), must(json.Marshal(bd))); err != nil {
			b.Fatal(err)
		}
	}
	return names
}
