package clientapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

// TestApplyRefusesUnsupportedFields: a Karmada policy that uses fields
// Tether does not implement is refused at apply, each field named, and
// nothing of the request is stored.
func TestApplyRefusesUnsupportedFields(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp := c.apply(t, fixture(t, "unsupported-policy.yaml"), false)
	want := []string{"ConfigMap default/settings CREATED", "PropagationPolicy default/karmada-only REJECTED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || resp.GetCommitted() || resp.GetRevision() != 0 {
		t.Fatalf("Apply(unsupported-policy.yaml) committed=%v revision=%d outcomes (-want +got):\n%s", resp.GetCommitted(), resp.GetRevision(), diff)
	}
	rejected := resp.GetResults()[1]
	var fields []string
	for _, fe := range rejected.GetFieldErrors() {
		fields = append(fields, fe.GetField())
	}
	wantFields := []string{"spec.schedulerName", "spec.placement.workloadAffinity", "spec.schedulePriority",
		"spec.failover.application.statePreservation", "spec.failover.cluster.purgeMode", "spec.failover.cluster.statePreservation"}
	if diff := cmp.Diff(wantFields, fields); diff != "" {
		t.Errorf("rejected policy field errors (-want +got):\n%s", diff)
	}
	for _, msg := range []string{"spec.failover.application.statePreservation: Forbidden: not supported by Tether yet (state preservation",
		`spec.schedulerName: Invalid value: "my-scheduler": Tether has one scheduler`} {
		if !strings.Contains(rejected.GetMessage(), msg) {
			t.Errorf("rejected policy message = %q; want it to contain %q", rejected.GetMessage(), msg)
		}
	}
	for _, ref := range []*hubv1.ObjectRef{
		{Kind: "ConfigMap", Namespace: "default", Name: "settings"},
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "karmada-only"},
	} {
		if _, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: ref}); status.Code(err) != codes.NotFound {
			t.Errorf("Get(%s %s) after a refused Apply = %v; want NotFound", ref.Kind, ref.Name, err)
		}
	}
}
