package placement

import (
	"k8s.io/apimachinery/pkg/api/equality"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

// AggregateOnly reports whether binding b differs from old only in what
// hub/aggregate writes: status.aggregatedStatus and the annotations of the
// template's aggregated status and of the stale clusters
// (fold.AnnotationTemplateStatus, fold.AnnotationStaleClusters). The
// aggregator writes a binding several times while its replicas get ready;
// the scheduling loop and the detector decide nothing on those fields
// (the loop reads the health only for eviction tasks and application
// failover, and checks that itself), so such a write need not wake them.
func AggregateOnly(old, b *workv1alpha1.ResourceBinding) bool {
	x, y := withoutAggregate(old), withoutAggregate(b)
	return equality.Semantic.DeepEqual(&x, &y)
}

// withoutAggregate is a shallow copy of b without what hub/aggregate
// writes.
func withoutAggregate(b *workv1alpha1.ResourceBinding) workv1alpha1.ResourceBinding {
	x := *b
	x.Status.AggregatedStatus = nil
	if len(b.Annotations) > 0 {
		x.Annotations = make(map[string]string, len(b.Annotations))
		for k, v := range b.Annotations {
			if k != fold.AnnotationTemplateStatus && k != fold.AnnotationStaleClusters {
				x.Annotations[k] = v
			}
		}
	}
	return x
}
