package store

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkEmbeddedHeldLog is the Go heap the embedded member holds after
// 2,000 writes of 64 KiB (the size of a status write of a binding of a few
// hundred clusters): heap-MB is what is in use after a collection, against
// 125 MB written.
func BenchmarkEmbeddedHeldLog(b *testing.B) {
	for range b.N {
		s := open(b, Config{DataDir: b.TempDir()})
		c := ctx(b)
		value := bytes.Repeat([]byte("x"), 64<<10)
		for i := range 2000 {
			if _, err := s.Put(c, fmt.Sprintf("/tether/bindings/apps/Deployment/bench/b-%03d", i%100), value); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-MB")
		s.Close()
	}
}
