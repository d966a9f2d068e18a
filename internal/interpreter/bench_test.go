package interpreter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
)

// The benchmarks run the suite's workload.yaml customization on its inputs.

func benchCase(b *testing.B, dir string) (*LuaInterpreter, conformance.Case) {
	b.Helper()
	root := conformance.Root()
	c, err := conformance.Load(root, filepath.Join(root, "cases", "workload", dir))
	if err != nil {
		b.Fatalf("Load(%s): %v", dir, err)
	}
	ipt, err := luaInterpreterFor(root, c)
	if err != nil {
		b.Fatal(err)
	}
	return ipt, c
}

func BenchmarkLuaRetain(b *testing.B) {
	ipt, c := benchCase(b, "retain-01-paused-and-status-from-observed")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ipt.Retain(ctx, c.Desired, c.Observed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLuaAggregateStatus10Clusters(b *testing.B) {
	ipt, c := benchCase(b, "aggregatestatus-01-two-clusters-all-observed")
	items := make([]configv1alpha1.AggregatedStatusItem, 10)
	for i := range items {
		items[i] = c.StatusItems[i%len(c.StatusItems)]
		items[i].ClusterName = fmt.Sprintf("member%d", i)
		items[i].Status = &runtime.RawExtension{Raw: c.StatusItems[i%len(c.StatusItems)].Status.Raw}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ipt.AggregateStatus(ctx, c.Object(), items); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLuaInterpretHealth(b *testing.B) {
	ipt, c := benchCase(b, "interprethealth-01-healthy")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ipt.InterpretHealth(ctx, c.Object()); err != nil {
			b.Fatal(err)
		}
	}
}
