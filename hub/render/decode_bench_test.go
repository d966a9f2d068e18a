package render

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// BenchmarkApplyBindingStatusWrite measures what a replica spends on one
// of the aggregator's status writes of a binding Duplicated to 1,000
// clusters (an item per cluster with a Deployment's status) for the
// renderer: the view's one decode (view.Bindings) and the renderer's
// apply. The write changes no work, so nearly all of it is decoding.
func BenchmarkApplyBindingStatusWrite(b *testing.B) {
	names := clusterNames(1000)
	bnd := dupBinding("web", names)
	for _, c := range names {
		bnd.Status.AggregatedStatus = append(bnd.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
			ClusterName: c, Applied: true, Health: configv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"replicas":6,"readyReplicas":6,"availableReplicas":6,"updatedReplicas":6,"observedGeneration":1,"generation":1,"resourceTemplateGeneration":1}`)},
		})
	}
	data, err := json.Marshal(bnd)
	if err != nil {
		b.Fatal(err)
	}
	in := newInputs()
	key := webKey
	apply := func() error {
		v, err := view.Bindings(store.BindingsPrefix+key, data)
		if err != nil {
			return err
		}
		o := &view.Object{Key: store.BindingsPrefix + key, Revision: 2, CreateRevision: 1, Value: v}
		return in.applyBinding(key, view.Change{Key: o.Key, Object: o})
	}
	if err := apply(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := apply(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "bytes/binding")
}
