package interpreter

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// The chain benchmarks run the default chain as the hub and agent do: a
// CloneSet goes through the built-in OpenKruise Lua customization, a
// Deployment through the native rules.

func workload(apiVersion, kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(3)},
		"spec": map[string]any{
			"replicas": int64(6),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "nginx", "image": "nginx:1.27",
					"resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "128Mi"}},
				}}},
			},
		},
		"status": map[string]any{
			"observedGeneration": int64(3), "replicas": int64(6), "readyReplicas": int64(6),
			"availableReplicas": int64(6), "updatedReplicas": int64(6), "updatedReadyReplicas": int64(6),
		},
	}}
}

func chain(b *testing.B) *Interpreter {
	b.Helper()
	ipt, err := New(Config{}, hclog.NewNullLogger())
	if err != nil {
		b.Fatal(err)
	}
	return ipt
}

var benchKinds = []struct{ name, apiVersion, kind string }{
	{"LuaCloneSet", "apps.kruise.io/v1alpha1", "CloneSet"},
	{"NativeDeployment", "apps/v1", "Deployment"},
}

func BenchmarkChainRetain(b *testing.B) {
	for _, k := range benchKinds {
		b.Run(k.name, func(b *testing.B) {
			ipt, ctx := chain(b), context.Background()
			desired, observed := workload(k.apiVersion, k.kind), workload(k.apiVersion, k.kind)
			unstructured.SetNestedField(observed.Object, int64(9), "spec", "replicas")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ipt.Retain(ctx, desired.DeepCopy(), observed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkChainAggregateStatus10Clusters(b *testing.B) {
	for _, k := range benchKinds {
		b.Run(k.name, func(b *testing.B) {
			ipt, ctx := chain(b), context.Background()
			obj := workload(k.apiVersion, k.kind)
			items := make([]configv1alpha1.AggregatedStatusItem, 10)
			for i := range items {
				items[i] = configv1alpha1.AggregatedStatusItem{
					ClusterName: fmt.Sprintf("member%d", i), Applied: true, Health: configv1alpha1.ResourceHealthy,
					Status: &runtime.RawExtension{Raw: []byte(`{"observedGeneration":3,"replicas":2,"readyReplicas":2,"availableReplicas":2,"updatedReplicas":2,"updatedReadyReplicas":2}`)},
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ipt.AggregateStatus(ctx, obj.DeepCopy(), items); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkChainInterpretHealth(b *testing.B) {
	for _, k := range benchKinds {
		b.Run(k.name, func(b *testing.B) {
			ipt, ctx := chain(b), context.Background()
			obj := workload(k.apiVersion, k.kind)
			healthy, err := ipt.InterpretHealth(ctx, obj)
			if err != nil || !healthy {
				b.Fatalf("InterpretHealth(%s) = %v, %v; want healthy (the benchmark must measure the real path)", k.kind, healthy, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ipt.InterpretHealth(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
