package clientapi

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// BenchmarkApplyBusyStore measures one-object Applies while other writers
// keep the embedded etcd's log fsyncs busy, as the aggregator's report
// writes do during a create (issue 16), from local reads (Apply's path)
// and from quorum reads (the path before, and Apply's fallback). Run it
// with
//
//	go test -run - -bench ApplyBusyStore -benchtime 200x ./hub/clientapi/
func BenchmarkApplyBusyStore(b *testing.B) {
	for _, path := range []string{"local", "quorum"} {
		b.Run(path, func(b *testing.B) {
			be, st := localBackend(b)
			if path == "quorum" {
				be.getLocal = st.GetAll
			}
			benchApplyBusy(b, be, st, func(i int) string { return fmt.Sprintf(localDeployment, i+1) })
		})
	}
}

// BenchmarkApplyHundredBusyStore measures Applies of 100 new ConfigMaps
// each on a store as busy as BenchmarkApplyBusyStore's: the million
// works' templates came in such requests (make load-million), one write
// after the other before. Run it with
//
//	go test -run - -bench ApplyHundredBusyStore -benchtime 10x ./hub/clientapi/
func BenchmarkApplyHundredBusyStore(b *testing.B) {
	be, st := localBackend(b)
	benchApplyBusy(b, be, st, func(i int) string {
		var docs strings.Builder
		for j := range 100 {
			fmt.Fprintf(&docs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c-%d-%03d, namespace: default}\ndata: {k: v}\n", i, j)
		}
		return docs.String()
	})
}

// benchApplyBusy applies manifests(i) b.N times while busyWriters keep the
// store's fsyncs busy, and reports the milliseconds per Apply.
func benchApplyBusy(b *testing.B, be *backend, st *store.Store, manifests func(i int) string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range busyWriters {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, _ = st.Put(ctx, fmt.Sprintf("/tether/reports/m%d/apps/Deployment/bench/d-%03d", w, i%100), []byte(fmt.Sprintf(`{"i":%d}`, i)))
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	b.ResetTimer()
	for i := range b.N {
		if _, err := be.apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests(i))}, fleetAdmin); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/apply")
}

// busyWriters is how many goroutines write report-like keys back to back
// in BenchmarkApplyBusyStore.
const busyWriters = 8
