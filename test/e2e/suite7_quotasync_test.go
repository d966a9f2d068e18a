package e2e

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// staticNamespace is the namespace of the staticAssignments step: its own,
// so that the member ResourceQuotas it makes (which require every pod of
// the namespace to request cpu) bound no other step's workloads.
const staticNamespace = "team-s"

var resourceQuotaGVR = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// staticQuotaYAML is team-s's Namespace and a FederatedResourceQuota
// assigning each cluster of assigned (name → "cpu memory") its own hard.
func staticQuotaYAML(assigned ...[3]string) string {
	y := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", staticNamespace) +
		"apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\n" +
		fmt.Sprintf("metadata: {name: sites, namespace: %s}\n", staticNamespace) +
		"spec:\n  overall: {cpu: 4, memory: 8Gi}\n  staticAssignments:\n"
	for _, a := range assigned {
		y += fmt.Sprintf("  - {clusterName: %s, hard: {cpu: %q, memory: %s}}\n", a[0], a[1], a[2])
	}
	return y
}

// hardIs is a waitMemberIn condition: the ResourceQuota's spec.hard.
func hardIs(cpu, memory string) func(*unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		hard, _, _ := unstructured.NestedStringMap(u.Object, "spec", "hard")
		return hard["cpu"] == cpu && hard["memory"] == memory && len(hard) == 2, fmt.Sprint(hard)
	}
}

// testQuotaStaticAssignments: a FederatedResourceQuota's staticAssignments
// appear as ResourceQuotas, named like it and with each cluster's hard, in
// the named members only (read from their API servers); the quota's
// status shows each assignment; a cluster removed from the list loses its
// ResourceQuota while the other keeps its own; deleting the quota removes
// the last one.
func testQuotaStaticAssignments(t *testing.T, s *suite7) {
	s.apply(t, staticQuotaYAML([3]string{edge1, "1", "2Gi"}, [3]string{edge2, "2", "3Gi"}))
	s.waitMemberIn(t, edge1, resourceQuotaGVR, staticNamespace, "sites", "hard cpu 1, memory 2Gi", hardIs("1", "2Gi"))
	s.waitMemberIn(t, edge2, resourceQuotaGVR, staticNamespace, "sites", "hard cpu 2, memory 3Gi", hardIs("2", "3Gi"))
	if _, err := s.cluster(regional1).Dynamic().Resource(resourceQuotaGVR).Namespace(staticNamespace).
		Get(context.Background(), "sites", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s: ResourceQuota %s/sites: %v; want NotFound (no assignment)", regional1, staticNamespace, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	frq, err := s.hub.Get(ctx, &hubv1.ObjectRef{ApiVersion: "policy.karmada.io/v1alpha1", Kind: "FederatedResourceQuota", Namespace: staticNamespace, Name: "sites"})
	if err != nil {
		t.Fatal(err)
	}
	agg, _, _ := unstructured.NestedSlice(frq.Object, "status", "aggregatedStatus")
	if got := fmt.Sprint(agg); got != "[map[clusterName:edge-1 hard:map[cpu:1 memory:2Gi]] map[clusterName:edge-2 hard:map[cpu:2 memory:3Gi]]]" {
		t.Errorf("FederatedResourceQuota status.aggregatedStatus = %s; want edge-1 and edge-2 with their assignments as hard", got)
	}

	s.apply(t, staticQuotaYAML([3]string{edge1, "1", "2Gi"}))
	s.waitGoneIn(t, edge2, resourceQuotaGVR, staticNamespace, "sites")
	s.waitMemberIn(t, edge1, resourceQuotaGVR, staticNamespace, "sites", "still hard cpu 1, memory 2Gi", hardIs("1", "2Gi"))

	s.tetherctl(t, "delete", "frq", "sites", "-n", staticNamespace)
	s.waitGoneIn(t, edge1, resourceQuotaGVR, staticNamespace, "sites")
}

// waitGoneIn polls until the object ns/name of gvr no longer exists in
// cluster c.
func (s *suite7) waitGoneIn(t *testing.T, c string, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("%s: %s %s/%s deleted", c, gvr.Resource, ns, name), func() (bool, string) {
		_, err := s.cluster(c).Dynamic().Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "still there"
	})
}
