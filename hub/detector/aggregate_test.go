package detector

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/store"
)

// TestAggregatorWriteReconcilesNothing: hub/aggregate's writes of a
// binding's aggregated status and template-status annotation, several per
// binding while its replicas get ready, do not make the detector reconcile
// the template again; the scheduler's write of the clusters does.
func TestAggregatorWriteReconcilesNothing(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	reconciled := map[store.ObjectRef]int{}
	e.start(func(d *Detector) {
		d.reconciled = func(ref store.ObjectRef) {
			mu.Lock()
			defer mu.Unlock()
			reconciled[ref]++
		}
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return reconciled[webRef]
	}
	e.put(ppObj("prod", "pp", 0, []policyv1alpha1.ResourceSelector{selAll("apps/v1", "Deployment")}))
	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.probe("prod", 0)
	before := count()
	e.schedule(webRef, "m1", "m2")
	e.probe("prod", 1)
	// The probe orders the watch events, not the workers' reconciles: the
	// web template's may finish just after the probe's.
	for deadline := time.Now().Add(10 * time.Second); count() == before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if count() != before+1 {
		t.Fatalf("the scheduler's write reconciled %s %d times; want 1", refString(webRef), count()-before)
	}

	before = count()
	b, rev, _ := e.binding(webRef)
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Annotations[fold.AnnotationTemplateStatus] = `{"readyReplicas":3}`
	b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy}}
	if _, err := e.st.Update(e.ctx, store.BindingKey(webRef), mustJSON(t, b), rev); err != nil {
		t.Fatalf("aggregator write: %v", err)
	}
	e.probe("prod", 2)
	if got := count() - before; got != 0 {
		t.Errorf("an aggregator write reconciled %s %d times; want 0", refString(webRef), got)
	}
}

// TestDetectorWriteKeepsAggregatedStatus: the detector's index keeps
// bindings without their aggregated status items (decodeBinding), yet its
// write of a binding (the template's replicas changed) keeps the items
// the aggregator wrote.
func TestDetectorWriteKeepsAggregatedStatus(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(ppObj("prod", "pp", 0, []policyv1alpha1.ResourceSelector{selAll("apps/v1", "Deployment")}))
	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.schedule(webRef, "m1", "m2")
	b, rev, _ := e.binding(webRef)
	items := []configv1alpha1.AggregatedStatusItem{
		{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":3}`)}},
		{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceUnknown},
	}
	b.Status.AggregatedStatus = items
	if _, err := e.st.Update(e.ctx, store.BindingKey(webRef), mustJSON(t, b), rev); err != nil {
		t.Fatalf("aggregator write: %v", err)
	}
	e.put(deployJSON("prod", "web", 4, `{"app":"web"}`))
	e.waitFor("the binding's replicas 4", func() bool {
		b, _, ok := e.binding(webRef)
		return ok && b.Spec.Replicas == 4
	})
	b, _, _ = e.binding(webRef)
	if diff := cmp.Diff(items, b.Status.AggregatedStatus); diff != "" {
		t.Errorf("aggregated status after the detector's write (-written by the aggregator +now):\n%s", diff)
	}
}

// TestIndexedBindingWithoutItems: the index's copy of a stored binding
// has everything but the aggregated status items.
func TestIndexedBindingWithoutItems(t *testing.T) {
	stored := []byte(`{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{"name":"web-deployment","namespace":"prod"},
		"spec":{"replicas":3,"clusters":[{"name":"m1","replicas":3}]},
		"status":{"schedulerObservedGeneration":2,"conditions":[{"type":"Scheduled","status":"True","reason":"Success","lastTransitionTime":"2026-01-01T00:00:00Z"}],
		"aggregatedStatus":[{"clusterName":"m1","applied":true,"health":"Healthy","status":{"readyReplicas":3}}]}}`)
	b, err := decodeBinding(stored)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status.AggregatedStatus != nil {
		t.Errorf("indexed binding has aggregated status items %+v; want none", b.Status.AggregatedStatus)
	}
	if b.Spec.Replicas != 3 || len(b.Spec.Clusters) != 1 || b.Status.SchedulerObservedGeneration != 2 || len(b.Status.Conditions) != 1 {
		t.Errorf("indexed binding lost more than the items: spec %+v, status %+v", b.Spec, b.Status)
	}
}
