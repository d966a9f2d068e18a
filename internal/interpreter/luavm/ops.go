package luavm

import (
	"context"
	"fmt"
	"sort"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// The operations: each runs one script in a fresh state, on a goroutine the
// caller can abandon (guard, watchdog.go), and converts its results there
// with Karmada's rules and error texts (interpreter-spec §6).

// GetReplicas runs GetReplicas(desiredObj) → replica, requirements.
func (vm *VM) GetReplicas(ctx context.Context, obj *unstructured.Unstructured, script string) (int32, *configv1alpha1.ReplicaRequirements, error) {
	type replicas struct {
		n        int32
		requires *configv1alpha1.ReplicaRequirements
	}
	r, err := guard(ctx, vm, func(c *call) (replicas, error) {
		rets, err := vm.run(c, script, "GetReplicas", 2, obj)
		if err != nil {
			return replicas{}, err
		}
		replica, err := toInt32(rets[0])
		if err != nil {
			return replicas{}, err
		}
		switch req := rets[1].(type) {
		case *lua.LTable:
			requires := &configv1alpha1.ReplicaRequirements{}
			if err := c.convert(req, requires); err != nil {
				return replicas{}, err
			}
			return replicas{replica, requires}, nil
		case *lua.LNilType:
			return replicas{n: replica}, nil
		default:
			return replicas{}, fmt.Errorf("expect the returned requires type is table but got %s", rets[1].Type())
		}
	})
	return r.n, r.requires, err
}

// toInt32 is Karmada's ConvertLuaResultToInt: Go's int32(float64), which
// truncates toward zero and is platform-defined out of range (amd64:
// -2147483648 for NaN and anything that does not fit).
func toInt32(v lua.LValue) (int32, error) {
	n, ok := v.(lua.LNumber)
	if !ok {
		return 0, fmt.Errorf("result type %#v is not number", v.Type())
	}
	return int32(float64(n)), nil
}

// ReviseReplica runs ReviseReplica(desiredObj, desiredReplica).
func (vm *VM) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64, script string) (*unstructured.Unstructured, error) {
	return vm.objectOp(ctx, script, "ReviseReplica", []any{obj, replica}, []any{obj})
}

// Retain runs Retain(desiredObj, observedObj).
func (vm *VM) Retain(ctx context.Context, desired, observed *unstructured.Unstructured, script string) (*unstructured.Unstructured, error) {
	return vm.objectOp(ctx, script, "Retain", []any{desired, observed}, []any{desired, observed})
}

// AggregateStatus runs AggregateStatus(desiredObj, statusItems). A nil items
// slice reaches Lua as nil, an empty one as an empty table.
func (vm *VM) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem, script string) (*unstructured.Unstructured, error) {
	var arg any = items
	if items == nil {
		arg = nil
	}
	return vm.objectOp(ctx, script, "AggregateStatus", []any{obj, arg}, nil)
}

func (vm *VM) objectOp(ctx context.Context, script, fn string, args, refs []any) (*unstructured.Unstructured, error) {
	return guard(ctx, vm, func(c *call) (*unstructured.Unstructured, error) {
		rets, err := vm.run(c, script, fn, 1, args...)
		if err != nil {
			return nil, err
		}
		t, ok := rets[0].(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("expect the returned requires type is table but got %s", rets[0].Type())
		}
		out := &unstructured.Unstructured{}
		if err := c.convert(t, out, refs...); err != nil {
			return nil, err
		}
		return out, nil
	})
}

// ReflectStatus runs ReflectStatus(observedObj); the result's JSON is kept
// verbatim (sorted keys, no spaces).
func (vm *VM) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured, script string) (*runtime.RawExtension, error) {
	return guard(ctx, vm, func(c *call) (*runtime.RawExtension, error) {
		rets, err := vm.run(c, script, "ReflectStatus", 1, obj)
		if err != nil {
			return nil, err
		}
		t, ok := rets[0].(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("expect the returned replica type is table but got %s", rets[0].Type())
		}
		status := &runtime.RawExtension{}
		if err := c.convert(t, status); err != nil {
			return status, err
		}
		return status, nil
	})
}

// InterpretHealth runs InterpretHealth(observedObj), which must return a
// boolean: nil (no return) is an error, as in Karmada.
func (vm *VM) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured, script string) (bool, error) {
	return guard(ctx, vm, func(c *call) (bool, error) {
		rets, err := vm.run(c, script, "InterpretHealth", 1, obj)
		if err != nil {
			return false, err
		}
		b, ok := rets[0].(lua.LBool)
		if !ok {
			return false, fmt.Errorf("result type %#v is not bool", rets[0].Type())
		}
		return bool(b), nil
	})
}

// GetDependencies runs every script's GetDependencies(desiredObj), validates
// each result, and returns their union, deduplicated and sorted by
// (apiVersion, kind, namespace, name). A failing script stops the call.
func (vm *VM) GetDependencies(ctx context.Context, obj *unstructured.Unstructured, scripts ...string) ([]configv1alpha1.DependentObjectReference, error) {
	var all []configv1alpha1.DependentObjectReference
	for _, script := range scripts {
		deps, err := vm.getDependencies(ctx, obj, script)
		if err != nil {
			return nil, err
		}
		all = append(all, deps...)
	}
	return dedupSortDependencies(all), nil
}

func (vm *VM) getDependencies(ctx context.Context, obj *unstructured.Unstructured, script string) ([]configv1alpha1.DependentObjectReference, error) {
	return guard(ctx, vm, func(c *call) ([]configv1alpha1.DependentObjectReference, error) {
		rets, err := vm.run(c, script, "GetDependencies", 1, obj)
		if err != nil {
			return nil, err
		}
		t, ok := rets[0].(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("expect the returned requires type is table but got %s", rets[0].Type())
		}
		var deps []configv1alpha1.DependentObjectReference
		if err := c.convert(t, &deps); err != nil {
			return nil, err
		}
		if err := VerifyDependencies(deps); err != nil {
			return nil, err
		}
		return deps, nil
	})
}

// VerifyDependencies is Karmada's validation of dependency references.
func VerifyDependencies(deps []configv1alpha1.DependentObjectReference) error {
	var errs field.ErrorList
	base := field.NewPath("dependencies")
	for i, dep := range deps {
		p := base.Index(i)
		if dep.APIVersion == "" {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), dep.APIVersion, "missing required apiVersion"))
		}
		if dep.Kind == "" {
			errs = append(errs, field.Invalid(p.Child("kind"), dep.Kind, "missing required kind"))
		}
		if dep.Name == "" && dep.LabelSelector == nil {
			errs = append(errs, field.Invalid(p, deps[i], "dependency can not leave name and labelSelector all empty"))
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(dep.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return errs.ToAggregate()
}

// dedupSortDependencies removes equal references (label selectors compared
// by value) and sorts by apiVersion, kind, namespace, name. An empty input
// gives a non-nil empty list, as Karmada's set does.
func dedupSortDependencies(deps []configv1alpha1.DependentObjectReference) []configv1alpha1.DependentObjectReference {
	out := make([]configv1alpha1.DependentObjectReference, 0, len(deps))
	seen := make(map[string]bool, len(deps))
	for _, d := range deps {
		key := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%v", d.APIVersion, d.Kind, d.Namespace, d.Name, selectorKey(d))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// selectorKey identifies a label selector. Karmada's set compares the
// pointer itself, so two decoded selectors never compare equal there; the
// pointer is used here too to keep that behaviour.
func selectorKey(d configv1alpha1.DependentObjectReference) string {
	if d.LabelSelector == nil {
		return ""
	}
	return fmt.Sprintf("%p", d.LabelSelector)
}

// GetComponents runs GetComponents(desiredObj) → a list of components or nil.
func (vm *VM) GetComponents(ctx context.Context, obj *unstructured.Unstructured, script string) ([]configv1alpha1.Component, error) {
	return guard(ctx, vm, func(c *call) ([]configv1alpha1.Component, error) {
		rets, err := vm.run(c, script, "GetComponents", 1, obj)
		if err != nil {
			return nil, fmt.Errorf("failed to run 'GetComponents' script: %w", err)
		}
		switch t := rets[0].(type) {
		case *lua.LNilType:
			return nil, nil
		case *lua.LTable:
			var comps []configv1alpha1.Component
			if err := c.convert(t, &comps); err != nil {
				return nil, fmt.Errorf("failed to convert lua table for components: %w", err)
			}
			if comps == nil {
				comps = []configv1alpha1.Component{}
			}
			return comps, nil
		default:
			return nil, fmt.Errorf("expected result type 'table' or 'nil' from GetComponents, but got '%s'", rets[0].Type())
		}
	})
}
