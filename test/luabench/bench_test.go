package luabench

import (
	"context"
	"testing"
)

// TestSameResults runs every benchmarked operation once through each engine
// and requires the same results: the benchmark compares equal work.
func TestSameResults(t *testing.T) {
	e := newEngines()
	for _, op := range operations {
		t.Run(op.name, func(t *testing.T) {
			f := loadFixture(t, op)
			got, err := op.tether(context.Background(), e.tether, f)
			if err != nil {
				t.Fatalf("tether: %v", err)
			}
			want, err := op.karmada(e.karmada, f)
			if err != nil {
				t.Fatalf("karmada: %v", err)
			}
			g, err := canonical(got)
			if err != nil {
				t.Fatal(err)
			}
			w, err := canonical(want)
			if err != nil {
				t.Fatal(err)
			}
			if g != w {
				t.Fatalf("results differ\ntether:  %s\nkarmada: %s", g, w)
			}
		})
	}
}

// BenchmarkLua runs each operation through each engine. Every iteration is
// one complete hook call as a controller makes it: Karmada's takes a pooled
// state and runs DoString(script); Tether's builds a fresh state and runs
// the cached compiled script.
func BenchmarkLua(b *testing.B) {
	e := newEngines()
	ctx := context.Background()
	for _, op := range operations {
		f := loadFixture(b, op)
		b.Run("op="+op.name+"/engine=karmada", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := op.karmada(e.karmada, f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op="+op.name+"/engine=tether", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := op.tether(ctx, e.tether, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
