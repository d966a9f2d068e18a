package detector

import (
	"encoding/json"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

// encode is the stored form of a binding. Encoding is deterministic, so
// equal bindings give equal bytes.
func encode(b *workv1alpha1.ResourceBinding) ([]byte, error) {
	return json.Marshal(b)
}

// decodeBinding decodes a stored binding for the index, without its
// aggregated status items (fold.DecodeWithoutItems): hub/aggregate writes
// them, the detector decides nothing on them, and for a binding placed on
// 1,000 clusters they are most of its memory. A write of the binding puts
// the stored ones back (writes.update).
func decodeBinding(data []byte) (*workv1alpha1.ResourceBinding, error) {
	return fold.DecodeWithoutItems(data)
}
