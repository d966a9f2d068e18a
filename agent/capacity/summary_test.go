package capacity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func node(name, cpu string, ready, unschedulable bool) corev1.Node {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}},
		},
	}
}

func pod(nodeName, cpu, initCPU string) corev1.Pod {
	p := corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	if initCPU != "" {
		p.Spec.InitContainers = []corev1.Container{{
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(initCPU)}}}}
	}
	return p
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name  string
		nodes []corev1.Node
		pods  []corev1.Pod
		want  *agentv1.ResourceSummary
	}{
		{
			name:  "not-ready and cordoned nodes and their pods left out",
			nodes: []corev1.Node{node("a", "4", true, false), node("b", "8", false, false), node("c", "16", true, true)},
			pods:  []corev1.Pod{pod("a", "1", ""), pod("b", "2", ""), pod("c", "3", "")},
			want: &agentv1.ResourceSummary{
				Allocatable: map[string]string{"cpu": "4"},
				Allocated:   map[string]string{"cpu": "1", "pods": "1"},
				Allocating:  map[string]string{},
			},
		},
		{
			name:  "pending pods allocating; init container max",
			nodes: []corev1.Node{node("a", "4", true, false)},
			pods:  []corev1.Pod{pod("", "500m", "2"), pod("a", "1", "500m")},
			want: &agentv1.ResourceSummary{
				Allocatable: map[string]string{"cpu": "4"},
				Allocated:   map[string]string{"cpu": "1", "pods": "1"},
				Allocating:  map[string]string{"cpu": "2", "pods": "1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(tt.nodes, usesOf(tt.pods), "", nil)
			if diff := cmp.Diff(tt.want.String(), got.String()); diff != "" {
				t.Errorf("summarize() diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGrade(t *testing.T) {
	models := []*agentv1.ResourceModel{
		{Grade: 1, Ranges: []*agentv1.ResourceModelRange{{Name: "cpu", Min: "2", Max: ""}}},
		{Grade: 0, Ranges: []*agentv1.ResourceModelRange{{Name: "cpu", Min: "0", Max: "2"}}},
	}
	nodes := []corev1.Node{node("a", "4", true, false), node("b", "4", true, false), node("c", "1", true, false)}
	pods := []corev1.Pod{pod("a", "3", "")}
	got := summarize(nodes, usesOf(pods), "", models).GetAllocatableModelings()
	want := []*agentv1.AllocatableModeling{{Grade: 0, Count: 2}, {Grade: 1, Count: 1}}
	if len(got) != 2 || got[0].GetCount() != want[0].Count || got[1].GetCount() != want[1].Count {
		t.Fatalf("allocatable modelings = %v; want %v", got, want)
	}
}
