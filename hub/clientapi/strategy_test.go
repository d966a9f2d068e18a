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
