package fold

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// DecodeWithoutItems decodes a stored binding but its aggregated status
// items, which are scanned and never allocated. The aggregator rewrites
// them as agents report, each write reaches every binding watcher of the
// hub, and for a binding placed on 1,000 clusters they are most of its
// bytes: a watcher that decides nothing on them (the detector) decodes
// the rest only.
func DecodeWithoutItems(data []byte) (*workv1alpha1.ResourceBinding, error) {
	var doc struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              workv1alpha1.ResourceBindingSpec `json:"spec"`
		Status            struct {
			workv1alpha1.ResourceBindingStatus
			// Shadows the embedded status's items (the shallower field
			// wins in encoding/json).
			AggregatedStatus skipped `json:"aggregatedStatus"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	b := &workv1alpha1.ResourceBinding{TypeMeta: doc.TypeMeta, ObjectMeta: doc.ObjectMeta, Spec: doc.Spec,
		Status: doc.Status.ResourceBindingStatus}
	b.InternNames()
	return b, nil
}

// skipped decodes any JSON value into nothing.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }
