package aggregate

import (
	"encoding/json"
	"fmt"
	"sort"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

// maxBindingBytes bounds the encoding of a binding the aggregator writes:
// 1 MiB, under etcd's default 1.5 MiB request limit with room for the
// transaction around it. A binding's items hold each cluster's status
// (up to agentapi.MaxStatusJSONBytes, 64 KiB): a few dozen clusters of
// large statuses would otherwise make every write of the binding fail.
const maxBindingBytes = 1 << 20

// encodeBounded encodes nb, first leaving out per-cluster details until
// it fits maxBindingBytes: the largest items' statuses first, then their
// applied messages, saying so in fold.AnnotationStatusTruncated. The
// template status (computed from every item before) and each cluster's
// health and applied stay. The write never fails for its size unless the
// binding's spec alone is too large.
func encodeBounded(nb *workv1alpha1.ResourceBinding) ([]byte, encoding) {
	delete(nb.Annotations, fold.AnnotationStatusTruncated)
	data, enc := encode(nb)
	if enc.size <= maxBindingBytes {
		return data, enc
	}
	total := enc.size
	items := nb.Status.AggregatedStatus
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	size := func(i int) int {
		if items[i].Status == nil {
			return 0
		}
		return len(items[i].Status.Raw)
	}
	sort.SliceStable(order, func(x, y int) bool { return size(order[x]) > size(order[y]) })
	statuses, messages := 0, 0
	for _, i := range order {
		if total <= maxBindingBytes {
			break
		}
		if n := size(i); n > 0 {
			total -= n
			items[i].Status = nil
			statuses++
		}
	}
	for i := range items {
		if total <= maxBindingBytes {
			break
		}
		if n := len(items[i].AppliedMessage); n > 0 {
			total -= jsonLen(items[i].AppliedMessage)
			items[i].AppliedMessage = ""
			messages++
		}
	}
	if nb.Annotations == nil {
		nb.Annotations = map[string]string{}
	}
	nb.Annotations[fold.AnnotationStatusTruncated] = fmt.Sprintf(
		"the aggregated status was %d bytes, more than the %d written: the status of %d clusters and the applied message of %d left out, largest first",
		enc.size, maxBindingBytes, statuses, messages)
	return encode(nb)
}

// jsonLen is the length of s encoded as a JSON string.
func jsonLen(s string) int { return len(must(json.Marshal(s))) }
