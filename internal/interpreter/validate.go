package interpreter

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// ValidateCustomization is the load-time check of a RIC, stricter than
// Karmada's admission (which only parses the scripts):
//   - the target has an apiVersion and a kind;
//   - no other RIC of the same target defines the same operation, except
//     InterpretDependency (configv1alpha1.ValidateCustomizationConflicts,
//     Karmada's admission rule and message); others named like c are
//     skipped;
//   - every script compiles (gopher-lua's syntax error, with line and column);
//   - its top-level code runs within the limits and defines the function its
//     operation calls ("not found function GetReplicas");
//   - a dry run of the operation on a minimal object of the target kind
//     does not exceed the time, instruction or memory budget. Other dry-run
//     errors are not refused: scripts may rightly fail on an object that has
//     no spec.
func ValidateCustomization(ctx context.Context, vm *luavm.VM,
	c *configv1alpha1.ResourceInterpreterCustomization, others []configv1alpha1.ResourceInterpreterCustomization) error {
	t := c.Spec.Target
	if t.APIVersion == "" || t.Kind == "" {
		return fmt.Errorf("customization %s: spec.target needs apiVersion and kind", c.Name)
	}
	if err := checkConflicts(c, others); err != nil {
		return err
	}
	sample := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": t.APIVersion,
		"kind":       t.Kind,
		"metadata":   map[string]any{"name": "validation-sample", "namespace": "default"},
	}}
	for _, op := range c.Spec.Customizations.Operations() {
		s, _ := c.Spec.Customizations.Script(op)
		if s == "" {
			continue
		}
		if err := vm.Validate(ctx, s, luaFunctions[op]); err != nil {
			return fmt.Errorf("customization %s: %s script: %w", c.Name, op, err)
		}
		if err := dryRun(ctx, vm, op, s, sample); err != nil && luavm.IsBudgetError(err) {
			return fmt.Errorf("customization %s: %s script: dry run: %w", c.Name, op, err)
		}
	}
	return nil
}

// checkConflicts is the API's ValidateCustomizationConflicts (Karmada's
// admission rule), reporting each conflict with Karmada's message only.
func checkConflicts(c *configv1alpha1.ResourceInterpreterCustomization,
	others []configv1alpha1.ResourceInterpreterCustomization) error {
	var errs []error
	for _, e := range configv1alpha1.ValidateCustomizationConflicts(c, others) {
		errs = append(errs, errors.New(e.Detail))
	}
	return errors.Join(errs...)
}

func dryRun(ctx context.Context, vm *luavm.VM, op configv1alpha1.InterpreterOperation, s string, obj *unstructured.Unstructured) error {
	var err error
	switch op {
	case configv1alpha1.InterpreterOperationRetain:
		_, err = vm.Retain(ctx, obj, obj, s)
	case configv1alpha1.InterpreterOperationInterpretReplica:
		_, _, err = vm.GetReplicas(ctx, obj, s)
	case configv1alpha1.InterpreterOperationInterpretComponent:
		_, err = vm.GetComponents(ctx, obj, s)
	case configv1alpha1.InterpreterOperationReviseReplica:
		_, err = vm.ReviseReplica(ctx, obj, 1, s)
	case configv1alpha1.InterpreterOperationInterpretStatus:
		_, err = vm.ReflectStatus(ctx, obj, s)
	case configv1alpha1.InterpreterOperationAggregateStatus:
		_, err = vm.AggregateStatus(ctx, obj, nil, s)
	case configv1alpha1.InterpreterOperationInterpretHealth:
		_, err = vm.InterpretHealth(ctx, obj, s)
	case configv1alpha1.InterpreterOperationInterpretDependency:
		_, err = vm.GetDependencies(ctx, obj, s)
	}
	return err
}
