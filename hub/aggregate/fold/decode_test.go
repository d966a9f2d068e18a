package fold

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// widelyPlaced is the encoding of a binding on n clusters with an item
// each, and the binding.
func widelyPlaced(t testing.TB, n int) ([]byte, *workv1alpha1.ResourceBinding) {
	b := &workv1alpha1.ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "shop", Annotations: map[string]string{AnnotationStaleClusters: `["c-0"]`}},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
			Replicas: 3,
		},
		Status: workv1alpha1.ResourceBindingStatus{
			SchedulerObservedGeneration: 2,
			Conditions:                  []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "Success"}},
		},
	}
	for i := range n {
		name := fmt.Sprintf("c-%d", i)
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: name, Replicas: 3})
		b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
			ClusterName: name, Applied: true, Health: configv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3,"readyReplicas":3}`)},
		})
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data, b
}

func TestDecodeWithoutItems(t *testing.T) {
	data, b := widelyPlaced(t, 3)
	got, err := DecodeWithoutItems(data)
	if err != nil {
		t.Fatal(err)
	}
	want := *b
	want.Status.AggregatedStatus = nil
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if _, err := DecodeWithoutItems([]byte(`{"status":{"aggregatedStatus":[{]}}`)); err == nil {
		t.Error("decoding a binding whose items are not JSON succeeded; want an error")
	}
}

// BenchmarkDecodeBinding decodes a binding on 1,000 clusters whole and
// without its items.
func BenchmarkDecodeBinding(b *testing.B) {
	data, _ := widelyPlaced(b, 1000)
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var rb workv1alpha1.ResourceBinding
			if err := json.Unmarshal(data, &rb); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("without-items", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeWithoutItems(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
