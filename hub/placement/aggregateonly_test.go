package placement

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

func TestAggregateOnly(t *testing.T) {
	base := func() *workv1alpha1.ResourceBinding {
		return &workv1alpha1.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{AnnotationAppliedPlacement: "{}"}},
			Spec:       workv1alpha1.ResourceBindingSpec{Replicas: 3, Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 3}}},
		}
	}
	tests := []struct {
		name   string
		modify func(*workv1alpha1.ResourceBinding)
		want   bool
	}{
		{"nothing", func(*workv1alpha1.ResourceBinding) {}, true},
		{"aggregated status", func(b *workv1alpha1.ResourceBinding) {
			b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Health: configv1alpha1.ResourceHealthy}}
		}, true},
		{"template status and stale clusters", func(b *workv1alpha1.ResourceBinding) {
			b.Annotations[fold.AnnotationTemplateStatus] = `{"readyReplicas":3}`
			b.Annotations[fold.AnnotationStaleClusters] = `["m2"]`
		}, true},
		{"clusters", func(b *workv1alpha1.ResourceBinding) { b.Spec.Clusters = nil }, false},
		{"another annotation", func(b *workv1alpha1.ResourceBinding) { b.Annotations[AnnotationAppliedPlacement] = `{"x":1}` }, false},
		{"a condition", func(b *workv1alpha1.ResourceBinding) {
			b.Status.Conditions = []metav1.Condition{{Type: ConditionScheduled, Status: metav1.ConditionTrue}}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, b := base(), base()
			tt.modify(b)
			if got := AggregateOnly(old, b); got != tt.want {
				t.Errorf("AggregateOnly = %v; want %v", got, tt.want)
			}
			if len(old.Annotations) != 1 {
				t.Errorf("AggregateOnly modified its input: %v", old.Annotations)
			}
		})
	}
}
