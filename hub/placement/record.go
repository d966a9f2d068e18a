package placement

import (
	"encoding/json"
	"fmt"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// What the scheduling loop records on a binding besides spec.clusters and
// the status fields of the API type (hub/scheduler's documentation, "What
// is written").
const (
	// AnnotationAppliedPlacement holds the JSON of the placement the
	// binding was last scheduled with (Karmada's
	// policy.karmada.io/applied-placement).
	AnnotationAppliedPlacement = "policy.tether.io/applied-placement"
	// AnnotationRejections holds the JSON of []Rejection: the clusters the
	// last written scheduling decision turned down, with every reason.
	// Absent when none was rejected.
	AnnotationRejections = "scheduler.tether.io/rejections"
)

// The Scheduled condition, with Karmada's reasons.
const (
	ConditionScheduled = "Scheduled"

	ReasonSuccess        = "Success"
	ReasonNoClusterFit   = "NoClusterFit"
	ReasonUnschedulable  = "Unschedulable"
	ReasonSchedulerError = "SchedulerError"
)

// Rejections reads AnnotationRejections: nil when the binding has none.
func Rejections(b *workv1alpha1.ResourceBinding) ([]Rejection, error) {
	raw, ok := b.Annotations[AnnotationRejections]
	if !ok {
		return nil, nil
	}
	var out []Rejection
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationRejections, err)
	}
	return out, nil
}

// AppliedPlacement reads AnnotationAppliedPlacement; ok is false when the
// binding was never scheduled.
func AppliedPlacement(b *workv1alpha1.ResourceBinding) (p *policyv1alpha1.Placement, ok bool, err error) {
	raw, ok := b.Annotations[AnnotationAppliedPlacement]
	if !ok {
		return nil, false, nil
	}
	p = &policyv1alpha1.Placement{}
	if err := json.Unmarshal([]byte(raw), p); err != nil {
		return nil, true, fmt.Errorf("annotation %s: %w", AnnotationAppliedPlacement, err)
	}
	return p, true, nil
}

// jsonString is the compact JSON of v; the API types always marshal.
func jsonString(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("placement: marshal %T: %v", v, err))
	}
	return string(data)
}
