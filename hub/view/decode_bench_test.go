package view_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/view"
)

// statusWrite is one of the aggregator's status writes of a binding
// Duplicated to 1,000 clusters: an item per cluster with a Deployment's
// status.
func statusWrite(b *testing.B) []byte {
	rb := &workv1alpha1.ResourceBinding{}
	rb.Name, rb.Namespace = "web-deployment", "prod"
	for i := range 1000 {
		name := fmt.Sprintf("member-%04d", i)
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha1.TargetCluster{Name: name, Replicas: 3})
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
			ClusterName: name, Applied: true, Health: configv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"observedGeneration":1}`)}})
	}
	data, err := json.Marshal(rb)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeBindingOnce is what the view spends on such a write: one
// decode without the items, for every reader of the replica.
func BenchmarkDecodeBindingOnce(b *testing.B) {
	data := statusWrite(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := view.Bindings("/tether/bindings/apps/Deployment/prod/web", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBindingFull is one full decode of the same write, as the
// scheduling loop did for every such write before it read the view.
func BenchmarkDecodeBindingFull(b *testing.B) {
	data := statusWrite(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workv1alpha1.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
