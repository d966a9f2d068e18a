package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

func TestRecordReaders(t *testing.T) {
	b := &workv1alpha1.ResourceBinding{}
	if rs, err := Rejections(b); rs != nil || err != nil {
		t.Errorf("Rejections(no annotation) = %v, %v; want none", rs, err)
	}
	if _, ok, err := AppliedPlacement(b); ok || err != nil {
		t.Errorf("AppliedPlacement(no annotation) = %v, %v; want not scheduled", ok, err)
	}
	b.Annotations = map[string]string{
		AnnotationRejections:       `[{"cluster":"m2","reasons":["cluster(s) did not have the API resource"]}]`,
		AnnotationAppliedPlacement: `{"clusterAffinity":{"clusterNames":["m1"]}}`,
	}
	rs, err := Rejections(b)
	if diff := cmp.Diff([]Rejection{{Cluster: "m2", Reasons: []string{"cluster(s) did not have the API resource"}}}, rs); diff != "" || err != nil {
		t.Errorf("Rejections = %v (-want +got):\n%s", err, diff)
	}
	p, ok, err := AppliedPlacement(b)
	if !ok || err != nil || p.ClusterAffinity == nil || !cmp.Equal(p.ClusterAffinity.ClusterNames, []string{"m1"}) {
		t.Errorf("AppliedPlacement = %v, %v, %v; want clusterNames [m1]", p, ok, err)
	}
	b.Annotations[AnnotationRejections], b.Annotations[AnnotationAppliedPlacement] = "[", "{"
	if _, err := Rejections(b); err == nil {
		t.Errorf("Rejections(bad JSON) = nil error; want one naming the annotation")
	}
	if _, ok, err := AppliedPlacement(b); !ok || err == nil {
		t.Errorf("AppliedPlacement(bad JSON) = %v, %v; want scheduled, with an error", ok, err)
	}
}

func TestNeedsScheduleReadsTheRecord(t *testing.T) {
	exists := func(string) bool { return true }
	b := &workv1alpha1.ResourceBinding{Spec: workv1alpha1.ResourceBindingSpec{Replicas: 2,
		Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}}}}
	if got := NeedsSchedule(b, exists); got != ReasonNew {
		t.Errorf("NeedsSchedule(never scheduled) = %q; want %q", got, ReasonNew)
	}
	b.Annotations = map[string]string{AnnotationAppliedPlacement: "{"}
	if got := NeedsSchedule(b, exists); got != ReasonPlacementChanged {
		t.Errorf("NeedsSchedule(unreadable record) = %q; want %q", got, ReasonPlacementChanged)
	}
}
