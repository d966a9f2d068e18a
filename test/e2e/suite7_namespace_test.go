package e2e

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// newNamespace is a namespace no member has and the hub has no Namespace
// object for.
const newNamespace = "store"

// storeYAML is a Deployment and its PropagationPolicy in newNamespace,
// duplicated to edge-1 and regional-1, and nothing else: no Namespace, no
// policy for one.
const storeYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: cart, namespace: store, labels: {app: cart}}
spec:
  replicas: 1
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec:
      containers: [{name: cart, image: "nginx:1.27"}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: cart, namespace: store}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: cart}]
  placement:
    clusterAffinity: {clusterNames: [edge-1, regional-1]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// testNewNamespace: a Deployment and its PropagationPolicy applied in a
// namespace that neither the hub nor any member has land, ready, in the
// members the policy names with no other object or policy: the hub creates
// the Namespace and, as Karmada, propagates it to every member (edge-2
// included, where no workload of it runs).
func testNewNamespace(t *testing.T, s *suite7) {
	s.apply(t, storeYAML)
	for _, c := range []string{edge1, regional1} {
		s.waitMemberIn(t, c, deploymentGVR, newNamespace, "cart", "1 ready of nginx:1.27", workloadIs(1, "nginx:1.27", 1))
	}
	for _, c := range []string{edge1, edge2, regional1} {
		s.waitMemberIn(t, c, namespaceGVR, "", newNamespace, "propagated by the hub", func(u *unstructured.Unstructured) (bool, string) {
			return u.GetLabels()["tether.io/work-key"] != "", fmt.Sprint(u.GetLabels())
		})
	}
	s.waitRolled(t, &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: newNamespace, Name: "cart"}, 2)
}

// waitMemberIn polls the object ns/name ("" for cluster-scoped) of gvr in
// cluster c until cond holds.
func (s *suite7) waitMemberIn(t *testing.T, c string, gvr schema.GroupVersionResource, ns, name, what string, cond func(*unstructured.Unstructured) (bool, string)) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("%s: %s %s/%s: %s", c, gvr.Resource, ns, name, what), func() (bool, string) {
		u, err := s.cluster(c).Dynamic().Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cond(u)
	})
}
