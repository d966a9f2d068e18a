package clientapi_test

import (
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

// TestApplyRefusesUnknownApplyStrategy: a template whose
// apply.tether.io/strategy annotation names no strategy is REJECTED at
// that annotation, the error listing the allowed values; each of the four
// strategies is accepted.
func TestApplyRefusesUnknownApplyStrategy(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	cm := func(strategy string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {apply.tether.io/strategy: " + strategy + "}}\n")
	}
	for _, s := range []string{"ServerSideApply", "Update", "CreateOnly", "ReadOnly"} {
		r := c.apply(t, cm(s), true).GetResults()[0]
		if r.GetOutcome() == hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			t.Errorf("Apply(strategy %s) = REJECTED %s %v; want accepted", s, r.GetMessage(), r.GetFieldErrors())
		}
	}
	r := c.apply(t, cm("Replace"), true).GetResults()[0]
	const field = "metadata.annotations[apply.tether.io/strategy]"
	if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || len(r.GetFieldErrors()) != 1 || r.GetFieldErrors()[0].GetField() != field {
		t.Fatalf("Apply(strategy Replace) = %s %s %v; want REJECTED at %s", r.GetOutcome(), r.GetMessage(), r.GetFieldErrors(), field)
	}
	detail := r.GetFieldErrors()[0].GetDetail() + " " + r.GetMessage()
	for _, want := range []string{"Replace", "ServerSideApply", "Update", "CreateOnly", "ReadOnly"} {
		if !strings.Contains(detail, want) {
			t.Errorf("Apply(strategy Replace): %q does not name %s", detail, want)
		}
	}
}

// TestSimulateShowsApplyOptions: Simulate says, per rendered cluster, the
// strategy the template's annotation chooses and the policy's conflict
// resolution, as the works the hub sends carry them.
func TestSimulateShowsApplyOptions(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, admin)
	policy := func(conflict string) []byte {
		return []byte(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
  conflictResolution: ` + conflict + "\n")
	}
	withStrategy := strings.Replace(apiDeployment, "namespace: default}", "namespace: default, annotations: {apply.tether.io/strategy: CreateOnly}}", 1)
	cases := []struct {
		name, template, conflict string
		wantStrategy, wantCR     string
	}{
		{"no annotation", apiDeployment, "Abort", "ServerSideApply", "Abort"},
		{"CreateOnly, Overwrite", withStrategy, "Overwrite", "CreateOnly", "Overwrite"},
	}
	for _, tc := range cases {
		resp, err := c.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(tc.template), Policies: policy(tc.conflict)})
		if err != nil {
			t.Fatalf("Simulate(%s): %v", tc.name, err)
		}
		if len(resp.GetRendered()) != 1 {
			t.Fatalf("Simulate(%s) rendered = %v (%s); want m1", tc.name, resp.GetRendered(), resp.GetPlacement().GetMessage())
		}
		r := resp.GetRendered()[0]
		if r.GetApplyStrategy() != tc.wantStrategy || r.GetConflictResolution() != tc.wantCR {
			t.Errorf("Simulate(%s) = strategy %q, conflict resolution %q; want %q, %q",
				tc.name, r.GetApplyStrategy(), r.GetConflictResolution(), tc.wantStrategy, tc.wantCR)
		}
	}
}
