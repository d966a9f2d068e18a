package placement

import (
	"fmt"
	"testing"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// benchClusters is n clusters with resource summaries of varied size.
func benchClusters(n int) []Cluster {
	out := make([]Cluster, n)
	for i := range out {
		out[i] = Cluster{
			Name:       fmt.Sprintf("member-%04d", i),
			Labels:     map[string]string{"env": "prod"},
			Region:     fmt.Sprintf("r%d", i%10),
			APIEnabled: true,
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: rl("cpu", fmt.Sprint(16+i%48), "memory", fmt.Sprintf("%dGi", 64+i%128), "pods", "1100"),
				Allocated:   rl("cpu", "4", "memory", "16Gi", "pods", "100"),
			},
		}
	}
	return out
}

func benchInput(p policyv1alpha1.Placement) Input {
	w := deployment(1000)
	w.UID = "00000000-0000-0000-0000-000000000001"
	w.Requirements = &configv1alpha1.ReplicaRequirements{ResourceRequest: rl("cpu", "250m", "memory", "512Mi")}
	return Input{
		Placement: p,
		Clusters:  benchClusters(1000),
		Workload:  w,
	}
}

func BenchmarkScheduleDividedDynamic1000Clusters(b *testing.B) {
	in := benchInput(policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Schedule(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScheduleDuplicated1000Clusters(b *testing.B) {
	in := benchInput(policyv1alpha1.Placement{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Schedule(in); err != nil {
			b.Fatal(err)
		}
	}
}
