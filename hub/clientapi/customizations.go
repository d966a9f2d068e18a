package clientapi

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// scriptFields names the field of each operation's script, for field
// errors.
var scriptFields = map[configv1alpha1.InterpreterOperation]string{
	configv1alpha1.InterpreterOperationRetain:              "retention",
	configv1alpha1.InterpreterOperationInterpretReplica:    "replicaResource",
	configv1alpha1.InterpreterOperationInterpretComponent:  "componentResource",
	configv1alpha1.InterpreterOperationReviseReplica:       "replicaRevision",
	configv1alpha1.InterpreterOperationInterpretStatus:     "statusReflection",
	configv1alpha1.InterpreterOperationAggregateStatus:     "statusAggregation",
	configv1alpha1.InterpreterOperationInterpretHealth:     "healthInterpretation",
	configv1alpha1.InterpreterOperationInterpretDependency: "dependencyInterpretation",
}

// checkCustomizations runs the interpreter's load-time check
// (interpreter.ValidateCustomization: syntax, top-level code, the
// operation's function, a dry run within the Lua time, instruction and
// memory limits, conflicts) on every valid ResourceInterpreterCustomization
// of items, against the stored ones and the others of the input. A script
// the hub's interpreter would refuse is rejected here, so it is never
// stored: the customization watcher would keep the previous version, and a
// restart loads what is stored without checking again.
func (b *backend) checkCustomizations(ctx context.Context, items []*item) error {
	var input []*item
	for _, it := range items {
		if _, ok := it.typed.(*configv1alpha1.ResourceInterpreterCustomization); ok && !it.rejected() {
			input = append(input, it)
		}
	}
	if len(input) == 0 {
		return nil
	}
	stored, err := b.storedCustomizations(ctx)
	if err != nil {
		return err
	}
	for _, it := range input {
		c := it.typed.(*configv1alpha1.ResourceInterpreterCustomization)
		others := append([]configv1alpha1.ResourceInterpreterCustomization(nil), stored...)
		for _, o := range input {
			if o != it {
				others = append(others, *o.typed.(*configv1alpha1.ResourceInterpreterCustomization))
			}
		}
		if err := interpreter.ValidateCustomization(ctx, b.vm, c, others); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			detail := err.Error()
			if luavm.IsBudgetError(err) || strings.Contains(detail, context.DeadlineExceeded.Error()) {
				l := b.cfg.LuaLimits
				detail += fmt.Sprintf(" (Lua limits of one call: %s, %d instructions, %d bytes allocated)", l.Timeout, l.MaxInstructions, l.MaxMemoryBytes)
			}
			it.reject(fmt.Sprintf("%s %s is invalid: %s", it.ref.Kind, it.ref.Name, detail), &hubv1.FieldError{
				Field: scriptField(c, err), Type: string(field.ErrorTypeInvalid), Detail: detail,
			})
		}
	}
	return nil
}

// scriptField is the path of the script err is about: the operation
// ValidateCustomization names ("... InterpretReplica script: ..."), or the
// customizations as a whole (conflicts, target).
func scriptField(c *configv1alpha1.ResourceInterpreterCustomization, err error) string {
	for _, op := range c.Spec.Customizations.Operations() {
		if strings.Contains(err.Error(), " "+string(op)+" script: ") {
			return "spec.customizations." + scriptFields[op] + ".luaScript"
		}
	}
	return "spec.customizations"
}

func (b *backend) storedCustomizations(ctx context.Context) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	kvs, _, err := b.st.List(ctx, store.KindPrefix(store.ObjectsPrefix, configv1alpha1.GroupName, "ResourceInterpreterCustomization", ""))
	if err != nil {
		return nil, err
	}
	var out []configv1alpha1.ResourceInterpreterCustomization
	for _, kv := range kvs {
		if cs, err := interpreter.DecodeCustomizations(kv.Value); err == nil {
			out = append(out, cs...)
		}
	}
	return out, nil
}
