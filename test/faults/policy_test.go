package faults_test

import (
	"context"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// unboundFor is how long nginx stays without a PropagationPolicy in
// policyRecreated: long enough for the hub to act on the unbinding (its
// controllers react within a second).
const unboundFor = 20 * time.Second

var nginxPolicy = &hubv1.ObjectRef{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "nginx"}

// policyRecreated deletes nginx's PropagationPolicy, waits, and applies
// the examples again. As in Karmada, the members keep their objects while
// the template is unbound.
func policyRecreated(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	if _, err := x.client.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: nginxPolicy}); err != nil {
		t.Fatalf("delete the nginx PropagationPolicy: %v", err)
	}
	r.hold(unboundFor)
	x.applyExamples(ctx)
	r.healed()
	r.converge()
	r.finish()
}
