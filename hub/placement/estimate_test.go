package placement

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestFreeReplicas(t *testing.T) {
	summary := &clusterv1alpha1.ResourceSummary{
		Allocatable: rl("cpu", "4", "memory", "8Gi", "pods", "110"),
		Allocated:   rl("cpu", "1", "memory", "2Gi", "pods", "10"),
	}
	noPods := &clusterv1alpha1.ResourceSummary{Allocatable: rl("cpu", "4")}
	models := []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{
			{Name: "cpu", Min: resource.MustParse("0"), Max: resource.MustParse("2")},
			{Name: "memory", Min: resource.MustParse("0"), Max: resource.MustParse("4Gi")}}},
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{
			{Name: "cpu", Min: resource.MustParse("2"), Max: resource.MustParse("4")},
			{Name: "memory", Min: resource.MustParse("4Gi"), Max: resource.MustParse("8Gi")}}},
	}
	modeled := &clusterv1alpha1.ResourceSummary{Allocatable: summary.Allocatable, Allocated: summary.Allocated}
	modeled.AllocatableModelings = []clusterv1alpha1.AllocatableModeling{{Grade: 0, Count: 10}, {Grade: 1, Count: 3}}
	req := func(kv ...string) *configv1alpha1.ReplicaRequirements {
		return &configv1alpha1.ReplicaRequirements{ResourceRequest: rl(kv...)}
	}
	five := int32(5)
	tests := []struct {
		name    string
		cluster Cluster
		req     *configv1alpha1.ReplicaRequirements
		want    int64
	}{
		{"cpu in millicores and memory", Cluster{ResourceSummary: summary}, req("cpu", "500m", "memory", "1Gi"), 6},
		{"no requirements: free pods", Cluster{ResourceSummary: summary}, nil, 100},
		{"summary without pods", Cluster{ResourceSummary: noPods}, req("cpu", "1"), 0},
		{"requested resource not reported", Cluster{ResourceSummary: summary}, req("nvidia.com/gpu", "1"), 0},
		{"no summary", Cluster{}, req("cpu", "1"), 0},
		{"external estimate alone", Cluster{AvailableReplicas: &five}, req("cpu", "1"), 5},
		{"smaller estimate wins", Cluster{AvailableReplicas: &five, ResourceSummary: summary}, req("cpu", "100m"), 5},
		{"resource models", Cluster{ResourceSummary: modeled, ResourceModels: models}, req("cpu", "1", "memory", "2Gi"), 6},
		{"resource models: no grade fits", Cluster{ResourceSummary: modeled, ResourceModels: models}, req("cpu", "8"), 0},
	}
	for _, tt := range tests {
		w := deployment(1000)
		w.Requirements = tt.req
		if got := freeReplicas(&tt.cluster, &w); got != tt.want {
			t.Errorf("freeReplicas(%s) = %d; want %d", tt.name, got, tt.want)
		}
	}
}

func TestFreeReplicasNonWorkload(t *testing.T) {
	c := Cluster{}
	w := Workload{Kind: "ConfigMap"}
	if got := freeReplicas(&c, &w); got != 0 {
		t.Errorf("freeReplicas(config map) = %d; want 0", got)
	}
}
