package clientapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/store"
)

// TestApplyKeepsRebalancerStatus: a WorkloadRebalancer whose spec changes
// keeps the status hub/rebalancer wrote (Karmada keeps the results of
// workloads the spec no longer names); a template's status is not kept.
func TestApplyKeepsRebalancerStatus(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	doc := "apiVersion: apps.karmada.io/v1alpha1\nkind: WorkloadRebalancer\nmetadata: {name: r}\nspec: {workloads: [{apiVersion: apps/v1, kind: Deployment, namespace: default, name: a}]}\n"
	c.apply(t, []byte(doc), false)
	key := store.ObjectKey(store.ObjectRef{Group: appsv1alpha1.GroupName, Kind: appsv1alpha1.KindWorkloadRebalancer, Name: "r"})
	kv, err := h.st.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	var stored map[string]any
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		t.Fatal(err)
	}
	stored["status"] = map[string]any{"observedWorkloads": []any{map[string]any{
		"workload": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "a"}, "result": "Successful"}}}
	data, _ := json.Marshal(stored)
	if _, err := h.st.Update(ctx(t), key, data, kv.Revision); err != nil {
		t.Fatal(err)
	}

	resp := c.apply(t, []byte(strings.Replace(doc, "name: a}", "name: b}", 1)), false)
	if got := outcomes(resp); len(got) != 1 || !strings.HasSuffix(got[0], "CONFIGURED") {
		t.Fatalf("Apply(changed spec) = %v; want CONFIGURED", got)
	}
	kv, err = h.st.Get(ctx(t), key)
	if err != nil {
		t.Fatal(err)
	}
	var r appsv1alpha1.WorkloadRebalancer
	if err := json.Unmarshal(kv.Value, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Status.ObservedWorkloads) != 1 || r.Status.ObservedWorkloads[0].Workload.Name != "a" || r.Spec.Workloads[0].Name != "b" || r.Generation != 2 {
		t.Errorf("stored after the change: spec %v, status %+v, generation %d; want spec b, a's Successful kept, generation 2", r.Spec.Workloads, r.Status, r.Generation)
	}
}
