package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// quotaNamespace is the namespace whose FederatedResourceQuota the quota
// step sets.
const quotaNamespace = "team-a"

// teamQuotaYAML is a 4-CPU FederatedResourceQuota of team-a and a policy
// dividing team-a's Deployments among every cluster.
const teamQuotaYAML = `apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team-a, namespace: team-a}
spec:
  overall: {cpu: 4}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: team-a, namespace: team-a}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`

// quotaApp is team-a's Deployment with replicas of one CPU each.
func quotaApp(replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: team-a, labels: {app: app}}
spec:
  replicas: %d
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: "nginx:1.27", resources: {requests: {cpu: "1"}}}]
`, replicas)
}

// applyRefused applies manifests and expects the hub to refuse them with
// an error that says want.
func (s *suite7) applyRefused(t *testing.T, manifests, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	_, err := s.hub.Apply(ctx, []byte(manifests))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Apply = %v; want it refused saying %q", err, want)
	}
}

// testFederatedResourceQuota: with 4 CPU for team-a across the fleet, a
// Deployment asking 5 CPU in total is refused at apply; one asking 3
// places and runs; scaling it to 6 is refused, and the 3 keep running.
func testFederatedResourceQuota(t *testing.T, s *suite7) {
	s.apply(t, teamQuotaYAML)
	app := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: quotaNamespace, Name: "app"}
	s.applyRefused(t, quotaApp(5), "FederatedResourceQuota team-a/team-a exceeded for cpu: used 0 in the namespace (0 by this template), this template would use 5, allowed 4")

	s.apply(t, quotaApp(3))
	t.Cleanup(func() { s.tetherctl(t, "delete", "deployment", "app", "-n", quotaNamespace) })
	s.waitPlacement(t, app, "3 replicas", func(p map[string]int32) bool { return sum(p) == 3 })
	s.waitRolled(t, app, 3)

	s.applyRefused(t, quotaApp(6), "this template would use 6, allowed 4")
	s.applyRefused(t, quotaApp(6), "used 3 in the namespace (3 by this template)")
	s.waitRolled(t, app, 3)
	var running int64
	for _, c := range []string{edge1, edge2, regional1} {
		u, err := s.memberIn(c, quotaNamespace, "app")
		if err != nil {
			continue // a cluster the division left out
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		running += r
	}
	if running != 3 {
		t.Errorf("team-a/app replicas in the members after the refused scale-up = %d; want 3", running)
	}
}

// memberIn reads the Deployment ns/name of cluster c.
func (s *suite7) memberIn(c, ns, name string) (*unstructured.Unstructured, error) {
	return s.cluster(c).Dynamic().Resource(deploymentGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}
