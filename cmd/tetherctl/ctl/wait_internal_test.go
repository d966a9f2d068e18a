package ctl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

func TestProgressOf(t *testing.T) {
	policy := &hubv1.ObjectRef{Kind: "PropagationPolicy", Name: "web"}
	scheduled := &hubv1.Placement{Policy: policy, Binding: &hubv1.ObjectRef{Name: "web-deployment"}, Scheduled: true}
	item := func(cluster, status string, applied bool, health configv1alpha1.ResourceHealth) configv1alpha1.AggregatedStatusItem {
		it := configv1alpha1.AggregatedStatusItem{ClusterName: cluster, Applied: applied, Health: health}
		if status != "" {
			it.Status = &runtime.RawExtension{Raw: []byte(status)}
		}
		return it
	}
	// binding has resource version rv, the targets (cluster name, replicas)
	// and the items.
	binding := func(rv string, targets []workv1alpha1.TargetCluster, items ...configv1alpha1.AggregatedStatusItem) *workv1alpha1.ResourceBinding {
		b := &workv1alpha1.ResourceBinding{}
		b.Spec.Resource.ResourceVersion = rv
		b.Spec.Clusters = targets
		b.Status.AggregatedStatus = items
		return b
	}
	at := func(name string, replicas int32) workv1alpha1.TargetCluster {
		return workv1alpha1.TargetCluster{Name: name, Replicas: replicas}
	}
	on := func(ts ...workv1alpha1.TargetCluster) []workv1alpha1.TargetCluster { return ts }
	ready2 := `{"replicas":2,"readyReplicas":2}`
	duplicated := binding("5", on(at("m1", 2)), item("m1", ready2, true, "Healthy"))
	duplicated.Spec.Replicas, duplicated.Spec.Placement = 3, &policyv1alpha1.Placement{}
	failing := binding("", on(at("m1", 1), at("m2", 1), at("m3", 1)), item("m1", ready2, true, "Healthy"),
		configv1alpha1.AggregatedStatusItem{ClusterName: "m2", AppliedMessage: "forbidden"})
	failing.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{fold.AnnotationStaleClusters: `["m1"]`}}

	tests := []struct {
		name string
		pl   *hubv1.Placement
		b    *workv1alpha1.ResourceBinding
		want applied
		out  rollout
	}{
		{"no policy", &hubv1.Placement{Message: "no propagation policy matches the template"}, nil, applied{revision: 1},
			rollout{line: "no propagation policy matches it", missing: []string{"no propagation policy matches it: apply one"}}},
		{"not scheduled", &hubv1.Placement{Policy: policy, Binding: policy, Message: "0/3 clusters are available"}, binding("", nil), applied{revision: 1},
			rollout{line: "not scheduled: 0/3 clusters are available", missing: []string{"not scheduled: 0/3 clusters are available"}}},
		{"older revision", scheduled, binding("4", on(at("m1", 2)), item("m1", ready2, true, "Healthy")), applied{revision: 5},
			rollout{line: "waiting for the hub to take the new revision", missing: []string{"the hub has not processed the applied revision"}}},
		{"duplicated, replicas not yet rescheduled", scheduled, duplicated, applied{revision: 5},
			rollout{line: "waiting for the scheduler", missing: []string{"not scheduled yet for the applied revision"}}},
		{"placed nowhere", scheduled, binding("5", nil), applied{revision: 5}, rollout{line: "placed in no cluster", done: true}},
		{"ready and progressing", scheduled,
			binding("5", on(at("m1", 2), at("m2", 3)), item("m1", `{"replicas":2,"readyReplicas":2,"updatedReplicas":2}`, true, "Healthy"),
				item("m2", `{"replicas":3,"readyReplicas":1}`, true, "Unhealthy")), applied{revision: 5},
			rollout{line: "m1 2/2 ready  m2 1/3", missing: []string{"m2 1/3"}}},
		{"not yet scaled up", scheduled, binding("", on(at("m1", 4)), item("m1", ready2, true, "Healthy")), applied{revision: 5},
			rollout{line: "m1 2/4", missing: []string{"m1 2/4"}}},
		{"not yet scaled down", scheduled, binding("", on(at("m1", 1)), item("m1", ready2, true, "Healthy")), applied{revision: 5},
			rollout{line: "m1 2/2", missing: []string{"m1 2/2"}}},
		{"rolling update", scheduled, binding("", on(at("m1", 2)), item("m1", `{"replicas":2,"readyReplicas":2,"updatedReplicas":1}`, true, "Healthy")), applied{revision: 5},
			rollout{line: "m1 2/2", missing: []string{"m1 2/2"}}},
		{"status of the previous template generation", scheduled,
			binding("5", on(at("m1", 2)), item("m1", `{"replicas":2,"readyReplicas":2,"resourceTemplateGeneration":3}`, true, "Healthy")),
			applied{revision: 5, generation: 4}, rollout{line: "m1 2/2", missing: []string{"m1 2/2"}}},
		{"member controller behind", scheduled,
			binding("5", on(at("m1", 2)), item("m1", `{"replicas":2,"readyReplicas":2,"generation":7,"observedGeneration":6}`, true, "Healthy")),
			applied{revision: 5}, rollout{line: "m1 2/2", missing: []string{"m1 2/2"}}},
		{"all ready", scheduled,
			binding("6", on(at("m1", 2)), item("m1", `{"replicas":2,"readyReplicas":2,"resourceTemplateGeneration":4,"generation":7,"observedGeneration":7}`, true, "Healthy")),
			applied{revision: 5, generation: 4}, rollout{line: "m1 2/2 ready", done: true}},
		{"without replicas", scheduled,
			binding("", on(at("m1", 0), at("m2", 0)), item("m1", "", true, configv1alpha1.ResourceHealthy), item("m2", "", false, "")), applied{revision: 5},
			rollout{line: "m1 healthy  m2 not applied yet", missing: []string{"m2 not applied yet"}}},
		{"apply failed, no report, stale", scheduled, failing, applied{revision: 5},
			rollout{line: "m1 stale (the agent stopped reporting)  m2 not applied: forbidden  m3 waiting for the agent",
				missing: []string{"m1 stale (the agent stopped reporting)", "m2 not applied: forbidden", "m3 waiting for the agent"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := progressOf(tt.pl, tt.b, tt.want)
			if diff := cmp.Diff(tt.out, got, cmp.AllowUnexported(rollout{})); diff != "" {
				t.Errorf("progressOf(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestDiffValues(t *testing.T) {
	a := map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "web", "uid": "1"},
		"spec": map[string]any{"replicas": 3.0, "template": map[string]any{"containers": []any{map[string]any{"image": "nginx"}}}}}
	b := map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "web", "uid": "2", "labels": map[string]any{"region": "eu"}},
		"spec": map[string]any{"replicas": 2.0, "template": map[string]any{"containers": []any{map[string]any{"image": "eu.io/nginx"}}}}}
	want := []string{`metadata.labels.region: + "eu"`, "spec.replicas: 3 -> 2", `spec.template.containers[0].image: "nginx" -> "eu.io/nginx"`}
	if diff := cmp.Diff(want, diffValues("", a, b, nil)); diff != "" {
		t.Errorf("diffValues (-want +got):\n%s", diff)
	}
}
