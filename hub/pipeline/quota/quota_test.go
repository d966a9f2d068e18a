package quota

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func str(l corev1.ResourceList) string {
	s := ""
	for _, k := range []corev1.ResourceName{"cpu", "memory", "nvidia.com/gpu"} {
		if q, ok := l[k]; ok {
			s += string(k) + "=" + q.String() + " "
		}
	}
	return s
}

func binding(req corev1.ResourceList, clusters ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	rb := &workv1alpha1.ResourceBinding{}
	rb.Spec.Clusters = clusters
	if req != nil {
		rb.Spec.ReplicaRequirements = &configv1alpha1.ReplicaRequirements{ResourceRequest: req}
	}
	return rb
}

func TestUsage(t *testing.T) {
	tc := func(n string, r int32) workv1alpha1.TargetCluster {
		return workv1alpha1.TargetCluster{Name: n, Replicas: r}
	}
	withComponents := binding(nil, tc("a", 0), tc("b", 0))
	withComponents.Spec.Components = []configv1alpha1.Component{
		{Name: "master", Replicas: 1, ReplicaRequirements: &configv1alpha1.ComponentReplicaRequirements{ResourceRequest: rl("cpu", "2")}},
		{Name: "worker", Replicas: 3, ReplicaRequirements: &configv1alpha1.ComponentReplicaRequirements{ResourceRequest: rl("cpu", "500m", "memory", "1Gi")}},
	}
	cases := []struct {
		name string
		rb   *workv1alpha1.ResourceBinding
		want string
		per  map[string]string
	}{
		{"nil", nil, "", map[string]string{}},
		{"divided: replicas times requests, summed", binding(rl("cpu", "500m", "memory", "1Gi"), tc("a", 2), tc("b", 4)),
			"cpu=3 memory=6Gi ", map[string]string{"a": "cpu=1 memory=2Gi ", "b": "cpu=2 memory=4Gi "}},
		{"zero requests and zero replicas count nothing", binding(rl("cpu", "0", "memory", "1Gi"), tc("a", 0), tc("b", 1)),
			"memory=1Gi ", map[string]string{"b": "memory=1Gi "}},
		{"no requests", binding(nil, tc("a", 3)), "", map[string]string{}},
		{"components: one set per cluster", withComponents, "cpu=7 memory=6Gi ",
			map[string]string{"a": "cpu=3500m memory=3Gi ", "b": "cpu=3500m memory=3Gi "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := str(Usage(c.rb)); got != c.want {
				t.Errorf("Usage = %q; want %q", got, c.want)
			}
			per := UsageByCluster(c.rb)
			got := map[string]string{}
			for k, v := range per {
				got[k] = str(v)
			}
			if len(got) != len(c.per) {
				t.Fatalf("UsageByCluster = %v; want %v", got, c.per)
			}
			for k, v := range c.per {
				if got[k] != v {
					t.Errorf("UsageByCluster[%s] = %q; want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestCheck(t *testing.T) {
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "q"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "4", "memory", "8Gi")}}
	cases := []struct {
		name            string
		used, old, next corev1.ResourceList
		want            string
	}{
		{"fits", rl(), rl(), rl("cpu", "3"), ""},
		{"exactly the limit", rl("cpu", "1"), rl(), rl("cpu", "3"), ""},
		{"new template over", rl(), rl(), rl("cpu", "5"),
			"FederatedResourceQuota team-a/q exceeded for cpu: used 0 in the namespace (0 by this template), this template would use 5, allowed 4"},
		{"scale up over", rl("cpu", "3"), rl("cpu", "3"), rl("cpu", "6"),
			"FederatedResourceQuota team-a/q exceeded for cpu: used 3 in the namespace (3 by this template), this template would use 6, allowed 4"},
		{"others use the room", rl("cpu", "3500m"), rl(), rl("cpu", "1"), "exceeded for cpu: used 3500m in the namespace (0 by this template), this template would use 1, allowed 4"},
		{"memory over", rl("memory", "4Gi"), rl(), rl("cpu", "1", "memory", "5Gi"), "exceeded for memory"},
		{"unlimited resource grows", rl("cpu", "4"), rl(), rl("nvidia.com/gpu", "8"), ""},
		{"scale down while over a lowered quota", rl("cpu", "6"), rl("cpu", "6"), rl("cpu", "5"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(q, c.used, c.old, c.next)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check = %v; want it to fit", err)
			case c.want != "" && (err == nil || !contains(err.Error(), c.want)):
				t.Errorf("Check = %v; want %q", err, c.want)
			}
			var ee *ExceededError
			if err != nil && !errors.As(err, &ee) {
				t.Errorf("Check error is %T; want *ExceededError", err)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestStatus(t *testing.T) {
	q := &policyv1alpha1.FederatedResourceQuota{Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "4")}}
	tc := func(n string, r int32) workv1alpha1.TargetCluster {
		return workv1alpha1.TargetCluster{Name: n, Replicas: r}
	}
	st := Status(q, []*workv1alpha1.ResourceBinding{
		binding(rl("cpu", "1", "memory", "1Gi"), tc("edge-2", 1), tc("edge-1", 2)),
		binding(rl("cpu", "500m"), tc("edge-1", 1)),
	})
	got := "overall " + str(st.Overall) + "used " + str(st.OverallUsed)
	for _, c := range st.AggregatedStatus {
		got += "| " + c.ClusterName + " hard " + str(c.Hard) + "used " + str(c.Used)
	}
	want := "overall cpu=4 used cpu=3500m | edge-1 hard cpu=4 used cpu=2500m | edge-2 hard cpu=4 used cpu=1 "
	if got != want {
		t.Errorf("Status = %q; want %q", got, want)
	}
}

// TestStatusStaticAssignments: a statically assigned cluster shows its
// assignment as hard, also while nothing uses it; the others overall.
func TestStatusStaticAssignments(t *testing.T) {
	q := &policyv1alpha1.FederatedResourceQuota{Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: rl("cpu", "4"),
		StaticAssignments: []policyv1alpha1.StaticClusterAssignment{{ClusterName: "edge-2", Hard: rl("cpu", "1")}, {ClusterName: "edge-3", Hard: rl("cpu", "2")}}}}
	st := Status(q, []*workv1alpha1.ResourceBinding{
		binding(rl("cpu", "1"), workv1alpha1.TargetCluster{Name: "edge-1", Replicas: 2}, workv1alpha1.TargetCluster{Name: "edge-2", Replicas: 1}),
	})
	got := "used " + str(st.OverallUsed)
	for _, c := range st.AggregatedStatus {
		got += "| " + c.ClusterName + " hard " + str(c.Hard) + "used " + str(c.Used)
	}
	want := "used cpu=3 | edge-1 hard cpu=4 used cpu=2 | edge-2 hard cpu=1 used cpu=1 | edge-3 hard cpu=2 used "
	if got != want {
		t.Errorf("Status = %q; want %q", got, want)
	}
}
