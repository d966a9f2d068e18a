package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// applyOverriders applies one rule's overriders to obj, in place, in
// Karmada's fixed order whatever the order in the policy: image, command,
// args, labels, annotations, field, plaintext. Each overrider is one JSON
// patch applied to the result of the previous one; all plaintext items of
// the rule form a single patch.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders) error {
	for i := range o.ImageOverrider {
		ops, err := imagePatch(obj, &o.ImageOverrider[i])
		if err = patchOrErr(obj, ops, err); err != nil {
			return overriderErr("imageOverrider", i, err)
		}
	}
	for i := range o.CommandOverrider {
		ops, err := commandArgsPatch(obj, fieldCommand, &o.CommandOverrider[i])
		if err = patchOrErr(obj, ops, err); err != nil {
			return overriderErr("commandOverrider", i, err)
		}
	}
	for i := range o.ArgsOverrider {
		ops, err := commandArgsPatch(obj, fieldArgs, &o.ArgsOverrider[i])
		if err = patchOrErr(obj, ops, err); err != nil {
			return overriderErr("argsOverrider", i, err)
		}
	}
	for i := range o.LabelsOverrider {
		if err := applyPatch(obj, labelsPatch(obj, "labels", &o.LabelsOverrider[i])); err != nil {
			return overriderErr("labelsOverrider", i, err)
		}
	}
	for i := range o.AnnotationsOverrider {
		if err := applyPatch(obj, labelsPatch(obj, "annotations", &o.AnnotationsOverrider[i])); err != nil {
			return overriderErr("annotationsOverrider", i, err)
		}
	}
	for i := range o.FieldOverrider {
		if err := applyFieldOverrider(obj, &o.FieldOverrider[i]); err != nil {
			return overriderErr("fieldOverrider", i, err)
		}
	}
	return applyPlaintext(obj, o.Plaintext)
}

// patchOrErr applies ops unless building them failed.
func patchOrErr(obj *unstructured.Unstructured, ops []patchOp, err error) error {
	if err != nil {
		return err
	}
	return applyPatch(obj, ops)
}

// applyPlaintext applies the plaintext items as one RFC 6902 patch. On
// failure it finds which item failed, for the error only.
func applyPlaintext(obj *unstructured.Unstructured, items []policyv1alpha1.PlaintextOverrider) error {
	ops := make([]patchOp, 0, len(items))
	for _, p := range items {
		ops = append(ops, patchOp{Op: string(p.Operator), Path: p.Path, Value: rawValue(p.Value)})
	}
	err := applyPatch(obj, ops)
	if err == nil {
		return nil
	}
	i := failingOp(obj, ops)
	return overriderErr("plaintext", i, fmt.Errorf("%s %s: %w", ops[i].Op, ops[i].Path, err))
}

// failingOp returns the index of the first op of ops that cannot be
// applied to obj after the ones before it. obj is not modified.
func failingOp(obj *unstructured.Unstructured, ops []patchOp) int {
	for k := 1; k < len(ops); k++ {
		if applyPatch(obj.DeepCopy(), ops[:k]) != nil {
			return k - 1
		}
	}
	return len(ops) - 1
}
