package clientapi

import (
	"context"
	"fmt"
	"sync"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
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
			if path == "quorum" {
				be.getLocal = st.GetAll
			}
			b.ResetTimer()
			for i := range b.N {
				req := &hubv1.ApplyRequest{Manifests: []byte(fmt.Sprintf(localDeployment, i+1))}
				if _, err := be.apply(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/apply")
		})
	}
}

// busyWriters is how many goroutines write report-like keys back to back
// in BenchmarkApplyBusyStore.
const busyWriters = 8
