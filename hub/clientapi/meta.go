package clientapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// hubMetadata are the metadata fields the hub owns: whatever a user sends
// there (say, from `kubectl get -o yaml`) is dropped on Apply, and they are
// ignored when deciding whether an object changed.
var hubMetadata = []string{
	"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// stripHubOwned removes the hub's metadata and the status (which the hub
// aggregates from the member clusters) from obj, in place.
func stripHubOwned(obj map[string]any) {
	delete(obj, "status")
	meta, _ := obj["metadata"].(map[string]any)
	for _, f := range hubMetadata {
		delete(meta, f)
	}
}

// sameContent reports whether a stored object and a new one differ only in
// what the hub owns.
func sameContent(stored, next map[string]any) bool {
	a, b := deepCopyJSON(stored), deepCopyJSON(next)
	stripHubOwned(a)
	stripHubOwned(b)
	return reflect.DeepEqual(a, b)
}

// withHubMetadata returns a copy of obj with the hub's metadata: the uid
// and creationTimestamp of prev (the stored version, nil when new) or fresh
// ones, and the generation, 1 for a new object and one more than prev's for
// a change. The resourceVersion is not stored: it is the etcd revision of
// the value, which exists only once written, so reads add it (withRevision).
func withHubMetadata(obj, prev map[string]any, now time.Time) map[string]any {
	out := deepCopyJSON(obj)
	meta, _ := out["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		out["metadata"] = meta
	}
	var prevMeta map[string]any
	if prev != nil {
		prevMeta, _ = prev["metadata"].(map[string]any)
	}
	meta["uid"] = string(uuid.NewUUID())
	meta["creationTimestamp"] = now.UTC().Format(time.RFC3339)
	meta["generation"] = json.Number("1")
	if prevMeta != nil {
		for _, f := range []string{"uid", "creationTimestamp"} {
			if v, ok := prevMeta[f]; ok {
				meta[f] = v
			}
		}
		meta["generation"] = json.Number(strconv.FormatInt(generationOf(prevMeta)+1, 10))
	}
	return out
}

// withHubStatus keeps prev's status on obj when a hub loop writes the
// status of key's kind on the stored object itself: a WorkloadRebalancer's
// (hub/rebalancer), which, as in Karmada, keeps the results of workloads a
// changed spec no longer names. Other kinds' status is the hub's to
// derive, and the stored one is dropped.
func withHubStatus(key store.ObjectRef, obj, prev map[string]any) map[string]any {
	if key.Group != appsv1alpha1.GroupName || key.Kind != appsv1alpha1.KindWorkloadRebalancer {
		return obj
	}
	if st, ok := prev["status"]; ok {
		obj["status"] = st
	}
	return obj
}

func generationOf(meta map[string]any) int64 {
	if n, ok := meta["generation"].(json.Number); ok {
		g, _ := n.Int64()
		return g
	}
	if f, ok := meta["generation"].(float64); ok {
		return int64(f)
	}
	return 0
}

// withRevision decodes a stored value and sets metadata.resourceVersion to
// its etcd revision.
func withRevision(value []byte, rev int64) (map[string]any, error) {
	obj, err := decodeObject(value)
	if err != nil {
		return nil, fmt.Errorf("decode stored object: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, nil
}

// deepCopyJSON copies a decoded JSON value.
func deepCopyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopyJSON(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	default:
		return x
	}
}
