package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// applyFieldOverrider rewrites the string at o.FieldPath, which holds an
// embedded document: parsed as YAML when o has yaml ops (keys come back
// sorted), else as JSON when it has json ops, patched with the subPath ops
// and written back as a string. With neither the field becomes "", as in
// Karmada (its webhook rejects such a policy).
func applyFieldOverrider(obj *unstructured.Unstructured, o *policyv1alpha1.FieldOverrider) error {
	v, err := getPointer(obj.Object, o.FieldPath)
	if err != nil {
		return fmt.Errorf("get fieldPath %q: %w", o.FieldPath, err)
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("value at fieldPath %q is %T, not a string", o.FieldPath, v)
	}
	var out []byte
	switch {
	case len(o.YAML) > 0:
		if out, err = applyRawYAML([]byte(s), yamlOps(o.YAML)); err != nil {
			return fmt.Errorf("patch yaml at fieldPath %q: %w", o.FieldPath, err)
		}
	case len(o.JSON) > 0:
		if out, err = applyRawJSON([]byte(s), jsonOps(o.JSON)); err != nil {
			return fmt.Errorf("patch json at fieldPath %q: %w", o.FieldPath, err)
		}
	}
	return setPointer(obj.Object, o.FieldPath, string(out))
}

// jsonOps turns a fieldOverrider's json operations into patch ops.
func jsonOps(in []policyv1alpha1.JSONPatchOperation) []patchOp {
	ops := make([]patchOp, 0, len(in))
	for _, o := range in {
		ops = append(ops, patchOp{Op: string(o.Operator), Path: o.SubPath, Value: rawValue(o.Value)})
	}
	return ops
}

// yamlOps turns a fieldOverrider's yaml operations into patch ops.
func yamlOps(in []policyv1alpha1.YAMLPatchOperation) []patchOp {
	ops := make([]patchOp, 0, len(in))
	for _, o := range in {
		ops = append(ops, patchOp{Op: string(o.Operator), Path: o.SubPath, Value: rawValue(o.Value)})
	}
	return ops
}
