package render

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// BenchmarkPublishedMemory reports the heap the published state keeps per
// work, B/work: 100 works Duplicated to 1,000 clusters (one version per
// work, as in the load tool's million), each committed as the renderer
// commits a binding's plan.
func BenchmarkPublishedMemory(b *testing.B) {
	const keys = 100
	names := clusterNames(1000)
	var perWork float64
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := newState(time.Hour, 1000)
		for k := range keys {
			key := fmt.Sprintf("apps/Deployment/bench/web-%04d", k)
			up := &agentv1.WorkUpsert{WorkKey: key, Version: fmt.Sprintf("%064x", k)}
			p := &plan{key: key, exists: true, vouch: map[string]bool{}, evicting: map[string]bool{}, set: map[string]*agentv1.WorkUpsert{}}
			for _, c := range names {
				p.vouch[c], p.set[c] = true, up
			}
			s.commit([]*plan{p}, nil, time.Now())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		perWork = float64(after.HeapAlloc-before.HeapAlloc) / float64(keys*len(names))
	}
	b.ReportMetric(perWork, "B/work")
}
