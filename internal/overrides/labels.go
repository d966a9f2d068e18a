package overrides

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// labelsPatch builds the ops of one labels or annotations overrider; field
// is "labels" or "annotations" under metadata. add creates the map when it
// is missing (in obj itself, as Karmada does) and adds or overwrites the
// key; replace and remove skip keys that do not exist. Keys are escaped
// for JSON pointers ("/" becomes "~1").
func labelsPatch(obj *unstructured.Unstructured, field string, o *policyv1alpha1.LabelAnnotationOverrider) []patchOp {
	path := []string{"metadata", field}
	var ops []patchOp
	for _, key := range slices.Sorted(maps.Keys(o.Value)) {
		switch o.Operator {
		case policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
			current, _, _ := unstructured.NestedStringMap(obj.Object, path...)
			if _, ok := current[key]; !ok {
				continue
			}
		case policyv1alpha1.OverriderOpAdd:
			if _, ok, _ := unstructured.NestedStringMap(obj.Object, path...); !ok {
				if err := unstructured.SetNestedStringMap(obj.Object, map[string]string{}, path...); err != nil {
					continue
				}
			}
		}
		ops = append(ops, patchOp{
			Op:    string(o.Operator),
			Path:  "/metadata/" + field + "/" + escapePointerToken(key),
			Value: o.Value[key],
		})
	}
	return ops
}
