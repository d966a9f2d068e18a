package aggregate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/store"
)

// TestAggregatedStatusBounded: 40 clusters each reporting a 60 KiB status
// would make a 2.4 MB binding, over etcd's request limit. The binding is
// written under maxBindingBytes: every cluster keeps its item and health,
// the largest statuses are left out and the annotation says so, and the
// template status still counts every cluster.
func TestAggregatedStatusBounded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var clusters []string
	for i := range 40 {
		clusters = append(clusters, fmt.Sprintf("m%02d", i))
	}
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding(clusters...))
	e.heartbeat(clusters...)
	a, _ := e.start(Config{Local: true})
	pad := strings.Repeat("x", 60<<10)
	for _, c := range clusters {
		status := fmt.Sprintf(`{"generation":1,"resourceTemplateGeneration":1,"observedGeneration":1,"replicas":3,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":3,"pad":%q}`, pad)
		r := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: "d", Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, status)}}
		if err := a.Report(ctx, c, r); err != nil {
			t.Fatal(err)
		}
	}
	b := e.waitBinding(webRef, "every cluster's item", func(b *workv1alpha1.ResourceBinding) bool {
		return len(b.Status.AggregatedStatus) == len(clusters) && healthOf(b, clusters[len(clusters)-1]) == configv1alpha1.ResourceHealthy
	})
	kv, err := e.st.Get(ctx, store.BindingKey(webRef))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kv.Value); n > maxBindingBytes {
		t.Errorf("binding written with %d bytes; want at most %d", n, maxBindingBytes)
	}
	note := b.Annotations[fold.AnnotationStatusTruncated]
	if !strings.Contains(note, "the status of ") || !strings.Contains(note, "clusters") {
		t.Errorf("annotation %s = %q; want it to say which statuses were left out", fold.AnnotationStatusTruncated, note)
	}
	withStatus := 0
	for _, it := range b.Status.AggregatedStatus {
		if it.Health != configv1alpha1.ResourceHealthy || !it.Applied {
			t.Errorf("item %+v; want Healthy and applied, status or not", it)
		}
		if it.Status != nil {
			withStatus++
		}
	}
	if withStatus == 0 || withStatus == len(clusters) {
		t.Errorf("%d of %d items kept their status; want some, not all", withStatus, len(clusters))
	}
	if got := readyReplicas(b); got != 3*int64(len(clusters)) {
		t.Errorf("template readyReplicas %d; want %d (aggregated from every cluster's status)", got, 3*len(clusters))
	}
}
