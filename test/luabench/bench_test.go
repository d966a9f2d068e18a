package luabench

import (
	"context"
	"syscall"
	"testing"
	"time"
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
//
// Besides ns/op (wall time) each reports cpu-ns/op, the process's CPU time
// (user + system, all goroutines, the garbage collector included) per call:
// on a shared machine it varies far less with the other load than wall time.
func BenchmarkLua(b *testing.B) {
	e := newEngines()
	ctx := context.Background()
	for _, op := range operations {
		f := loadFixture(b, op)
		b.Run("op="+op.name+"/engine=karmada", func(b *testing.B) {
			measure(b, func() error {
				_, err := op.karmada(e.karmada, f)
				return err
			})
		})
		b.Run("op="+op.name+"/engine=tether", func(b *testing.B) {
			measure(b, func() error {
				_, err := op.tether(ctx, e.tether, f)
				return err
			})
		})
	}
}

func measure(b *testing.B, call func() error) {
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
