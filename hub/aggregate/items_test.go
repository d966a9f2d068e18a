package aggregate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

func webBinding(targets ...string) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-deployment"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod", Name: "web"},
			Replicas:  3,
			Placement: &policyv1alpha1.Placement{},
		},
	}
	for _, t := range targets {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: t, Replicas: 3})
	}
	return b
}

func manifest(name string, h agentv1.Health, applied bool, status string) *agentv1.ManifestStatus {
	return &agentv1.ManifestStatus{
		Identity:   &agentv1.ObjectIdentity{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: name},
		StatusJson: []byte(status), Health: h, Applied: applied,
	}
}

func report(version string, ms ...*agentv1.ManifestStatus) *agentv1.StatusReport {
	return &agentv1.StatusReport{WorkKey: "apps/Deployment/prod/web", Version: version, Digest: "d-" + version, Manifests: ms}
}

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func TestBuildItems(t *testing.T) {
	const st = `{"readyReplicas":2}`
	healthy := manifest("web", agentv1.Health_HEALTH_HEALTHY, true, st)
	tests := []struct {
		name      string
		b         func() *workv1alpha1.ResourceBinding
		obs       map[string]Observation
		stale     []string
		hook      bool
		want      []configv1alpha1.AggregatedStatusItem
		wantStale []string
	}{
		{"reported healthy", func() *workv1alpha1.ResourceBinding { return webBinding("m1") },
			map[string]Observation{"m1": {Report: report("v1", healthy), Latest: "v1"}}, nil, true,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)}}, nil},
		{"not reported yet: Unknown", func() *workv1alpha1.ResourceBinding { return webBinding("m1") }, nil, nil, true,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Health: configv1alpha1.ResourceUnknown}}, nil},
		{"failed ack of the latest version wins over an older report", func() *workv1alpha1.ResourceBinding { return webBinding("m1") },
			map[string]Observation{"m1": {Report: report("v1", healthy), Ack: &agentv1.Ack{Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_CONFLICT, Message: "exists"}, Latest: "v2"}}, nil, true,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: false, AppliedMessage: "exists", Health: configv1alpha1.ResourceUnknown, Status: raw(st)}}, nil},
		{"applied ack newer than the report: health Unknown until the new version reports", func() *workv1alpha1.ResourceBinding { return webBinding("m1") },
			map[string]Observation{"m1": {Report: report("v1", healthy), Ack: &agentv1.Ack{Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}, Latest: "v2"}}, nil, true,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceUnknown, Status: raw(st)}}, nil},
		{"agent could not judge, no health hook: Healthy", func() *workv1alpha1.ResourceBinding { return webBinding("m1") },
			map[string]Observation{"m1": {Report: report("v1", manifest("web", agentv1.Health_HEALTH_UNKNOWN, true, "")), Latest: "v1"}}, nil, false,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy}}, nil},
		{"agent could not judge, with a hook: Unknown", func() *workv1alpha1.ResourceBinding { return webBinding("m1") },
			map[string]Observation{"m1": {Report: report("v1", manifest("web", agentv1.Health_HEALTH_UNKNOWN, true, "")), Latest: "v1"}}, nil, true,
			[]configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceUnknown}}, nil},
		{"stale: Unknown, no status, applied kept", func() *workv1alpha1.ResourceBinding { return webBinding("m1", "m2") },
			map[string]Observation{"m1": {Report: report("v1", healthy), Latest: "v1"}, "m2": {Report: report("v1", healthy), Latest: "v1"}}, []string{"m2"}, true,
			[]configv1alpha1.AggregatedStatusItem{
				{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)},
				{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceUnknown},
			}, []string{"m2"}},
		{"nothing newer than the binding: item kept, stale mark kept", func() *workv1alpha1.ResourceBinding {
			b := webBinding("m1", "m2")
			b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{
				{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)},
				{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceUnknown},
				{ClusterName: "gone", Applied: true},
			}
			b.Annotations = map[string]string{fold.AnnotationStaleClusters: `["m2"]`}
			return b
		}, nil, nil, true,
			[]configv1alpha1.AggregatedStatusItem{
				{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)},
				{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceUnknown},
			}, []string{"m2"}},
		{"evicting cluster and other manifests", func() *workv1alpha1.ResourceBinding {
			b := webBinding("m1")
			b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m0"}}
			return b
		}, map[string]Observation{"m1": {Report: report("v1", manifest("other", agentv1.Health_HEALTH_UNHEALTHY, true, "{}"), healthy), Latest: "v1"}}, nil, true,
			[]configv1alpha1.AggregatedStatusItem{
				{ClusterName: "m0", Health: configv1alpha1.ResourceUnknown},
				{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)},
			}, nil},
		{"dependency binding: the requiring bindings' clusters", func() *workv1alpha1.ResourceBinding {
			b := webBinding()
			b.Spec.Placement = nil
			b.Spec.RequiredBy = []workv1alpha1.BindingSnapshot{{Name: "a", Clusters: []workv1alpha1.TargetCluster{{Name: "m2"}}}}
			return b
		}, nil, nil, true, []configv1alpha1.AggregatedStatusItem{{ClusterName: "m2", Health: configv1alpha1.ResourceUnknown}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stale := func(c string) bool {
				for _, s := range tt.stale {
					if s == c {
						return true
					}
				}
				return false
			}
			items, staleNames := BuildItems(tt.b(), ItemsInput{Observations: tt.obs, Stale: stale, HealthHook: tt.hook})
			if diff := cmp.Diff(tt.want, items); diff != "" {
				t.Errorf("BuildItems items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStale, staleNames); diff != "" {
				t.Errorf("BuildItems stale (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildItemsSuperseded: a cluster whose assignment changed has health
// Unknown until a version newer than the one observed then comes.
func TestBuildItemsSuperseded(t *testing.T) {
	const st = `{"readyReplicas":2}`
	healthy := manifest("web", agentv1.Health_HEALTH_HEALTHY, true, st)
	kept := webBinding("m1", "m2", "m3")
	kept.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m3", Applied: true, Health: configv1alpha1.ResourceHealthy}}
	obs := map[string]Observation{
		"m1": {Report: report("v1", healthy), Latest: "v1"}, // the version observed at the change
		"m2": {Report: report("v2", healthy), Latest: "v2"}, // a newer one came
	}
	superseded := map[string]string{"m1": "v1", "m2": "v1", "m3": ""}
	items, _ := BuildItems(kept, ItemsInput{Observations: obs, HealthHook: true, Superseded: superseded})
	want := []configv1alpha1.AggregatedStatusItem{
		{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceUnknown, Status: raw(st)},
		{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(st)},
		{ClusterName: "m3", Applied: true, Health: configv1alpha1.ResourceUnknown},
	}
	if diff := cmp.Diff(want, items); diff != "" {
		t.Errorf("BuildItems items (-want +got):\n%s", diff)
	}
}
