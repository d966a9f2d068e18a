package fold

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

func TestKeepConditionTimes(t *testing.T) {
	prev := map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "old"}}}
	cur := map[string]any{"conditions": []any{
		map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "new"},
		map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": "new"},
	}}
	keepConditionTimes(cur, prev)
	conds := cur["conditions"].([]any)
	if conds[0].(map[string]any)["lastTransitionTime"] != "old" || conds[1].(map[string]any)["lastTransitionTime"] != "new" {
		t.Errorf("conditions = %v; want the unchanged one's time kept, the new one's left", conds)
	}
}

func TestMergeInto(t *testing.T) {
	b := &workv1alpha1.ResourceBinding{}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"}}}
	if err := MergeInto(obj, b); err != nil || obj.Object["status"] != nil {
		t.Errorf("MergeInto without a template status = %v, status %v; want obj untouched", err, obj.Object["status"])
	}
	b.Annotations = map[string]string{AnnotationTemplateStatus: `{"readyReplicas":3}`}
	if err := MergeInto(obj, b); err != nil {
		t.Fatalf("MergeInto: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 3 {
		t.Errorf("status.readyReplicas = %d; want 3", got)
	}
}

func TestStaleClusters(t *testing.T) {
	b := &workv1alpha1.ResourceBinding{}
	if got := StaleClusters(b); got != nil {
		t.Errorf("StaleClusters(no annotation) = %v; want none", got)
	}
	b.Annotations = map[string]string{AnnotationStaleClusters: `["m1","m2"]`}
	if got := StaleClusters(b); len(got) != 2 || got[0] != "m1" || got[1] != "m2" {
		t.Errorf("StaleClusters = %v; want [m1 m2]", got)
	}
}
