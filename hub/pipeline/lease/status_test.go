package lease

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func TestClusterStatus(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stored := clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.30.0",
		Conditions:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}},
		ResourceSummary:   &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("1")}},
		APIEnablements:    []clusterv1alpha1.APIEnablement{{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "pods", Kind: "Pod"}}}},
	}
	full := &agentv1.Heartbeat{
		KubernetesVersion: "v1.31.2",
		Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE,
			Reason: "AgentReady", Message: "ok", LastTransitionTime: timestamppb.New(at)}},
		ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"cpu": "8", "memory": "not-a-quantity"},
			AllocatableModelings: []*agentv1.AllocatableModeling{{Grade: -1, Count: 3}}},
		ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
	}
	for _, tc := range []struct {
		name string
		hb   *agentv1.Heartbeat
		want clusterv1alpha1.ClusterStatus
	}{
		{"nil heartbeat keeps the record", nil, stored},
		{"empty heartbeat keeps the record", &agentv1.Heartbeat{}, stored},
		{"heartbeat replaces what it reports", full, clusterv1alpha1.ClusterStatus{
			KubernetesVersion: "v1.31.2",
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AgentReady", Message: "ok",
				LastTransitionTime: metav1.NewTime(at)}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("8")},
				AllocatableModelings: []clusterv1alpha1.AllocatableModeling{{Grade: 0, Count: 3}}},
			APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1",
				Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ClusterStatus(stored, tc.hb)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("ClusterStatus(%s) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}
