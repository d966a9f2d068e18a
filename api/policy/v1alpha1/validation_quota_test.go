package v1alpha1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateFederatedResourceQuota(t *testing.T) {
	q := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*FederatedResourceQuota)
		want   []string
		detail string
	}{
		{"valid", func(*FederatedResourceQuota) {}, nil, ""},
		{"no overall", func(f *FederatedResourceQuota) { f.Spec.Overall = nil }, []string{"spec.overall"}, "Required"},
		{"long name", func(f *FederatedResourceQuota) { f.Name = strings.Repeat("a", 64) }, []string{"metadata.name"}, "no more than 63"},
		{"negative", func(f *FederatedResourceQuota) { f.Spec.Overall = q("cpu", "-1") }, []string{"spec.overall[cpu]", "spec.overall[cpu]"}, "greater than or equal to 0"},
		{"requests.cpu is not counted", func(f *FederatedResourceQuota) { f.Spec.Overall = q("requests.cpu", "4") },
			[]string{"spec.overall[requests.cpu]"}, "Unsupported value"},
		{"pods is not counted", func(f *FederatedResourceQuota) { f.Spec.Overall = q("cpu", "4", "pods", "10") },
			[]string{"spec.overall[pods]"}, "Unsupported value"},
		{"static assignments within overall", func(f *FederatedResourceQuota) {
			f.Spec.StaticAssignments = []StaticClusterAssignment{{ClusterName: "edge-1", Hard: q("cpu", "1")}, {ClusterName: "edge-2", Hard: q("cpu", "3", "memory", "8Gi")}}
		}, nil, ""},
		{"static assignments beyond overall", func(f *FederatedResourceQuota) {
			f.Spec.StaticAssignments = []StaticClusterAssignment{{ClusterName: "Edge_1", Hard: q("cpu", "3", "gpu", "1")}, {ClusterName: "b", Hard: q("cpu", "2")}}
		}, []string{"spec.staticAssignments[0].clusterName", "spec.staticAssignments[0].hard[gpu]", "spec.overall[cpu]"}, ""},
		{"a cluster assigned twice", func(f *FederatedResourceQuota) {
			f.Spec.StaticAssignments = []StaticClusterAssignment{{ClusterName: "edge-1", Hard: q("cpu", "1")}, {ClusterName: "edge-1", Hard: q("cpu", "2")}}
		}, []string{"spec.staticAssignments[1].clusterName"}, "Duplicate value"},
		{"an assignment's uncounted resource", func(f *FederatedResourceQuota) {
			f.Spec.Overall = q("cpu", "4", "pods", "10")
			f.Spec.StaticAssignments = []StaticClusterAssignment{{ClusterName: "edge-1", Hard: q("pods", "5")}}
		}, []string{"spec.overall[pods]", "spec.staticAssignments[0].hard[pods]"}, "Unsupported value"},
		{"an assignment's negative quantity", func(f *FederatedResourceQuota) {
			f.Spec.StaticAssignments = []StaticClusterAssignment{{ClusterName: "edge-1", Hard: q("cpu", "-1")}}
		}, []string{"spec.staticAssignments[0].hard[cpu]"}, "greater than or equal to 0"},
		{"status is not validated (the hub drops it)", func(f *FederatedResourceQuota) { f.Status.OverallUsed = q("cpu", "1") }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "q"},
				Spec: FederatedResourceQuotaSpec{Overall: q("cpu", "4", "memory", "8Gi")}}
			tt.mutate(f)
			assertErrors(t, tt.name, f.Validate(), tt.want, tt.detail)
		})
	}
}
