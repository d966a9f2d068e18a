package interpreter

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// LuaInterpreter runs the merged Lua scripts of a set of customizations: the
// RICs of the hub (Karmada's "configurable" interpreter) or the built-in
// third-party ones. Every method returns (result, enabled, err); enabled is
// false when no non-empty script exists for the object's exact GVK and the
// operation.
type LuaInterpreter struct {
	vm *luavm.VM

	// mu serialises writers; readers load rules without locking.
	mu sync.Mutex
	// byName are the loaded customizations, by metadata.name.
	byName map[string]configv1alpha1.ResourceInterpreterCustomization
	rules  atomic.Pointer[map[schema.GroupVersionKind]*rules]
}

// NewLuaInterpreter returns an interpreter with no customizations.
func NewLuaInterpreter(vm *luavm.VM) *LuaInterpreter {
	l := &LuaInterpreter{vm: vm, byName: map[string]configv1alpha1.ResourceInterpreterCustomization{}}
	empty := map[schema.GroupVersionKind]*rules{}
	l.rules.Store(&empty)
	return l
}

// Load replaces all customizations, like Karmada's LoadConfig.
func (l *LuaInterpreter) Load(cs []configv1alpha1.ResourceInterpreterCustomization) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byName = make(map[string]configv1alpha1.ResourceInterpreterCustomization, len(cs))
	for _, c := range cs {
		l.byName[c.Name] = c
	}
	l.rebuild()
}

// Apply adds or replaces one customization, by name.
func (l *LuaInterpreter) Apply(c *configv1alpha1.ResourceInterpreterCustomization) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byName[c.Name] = *c
	l.rebuild()
}

// Remove deletes the customization with that name, if loaded.
func (l *LuaInterpreter) Remove(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byName, name)
	l.rebuild()
}

// Customizations returns the loaded customizations.
func (l *LuaInterpreter) Customizations() []configv1alpha1.ResourceInterpreterCustomization {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]configv1alpha1.ResourceInterpreterCustomization, 0, len(l.byName))
	for _, c := range l.byName {
		out = append(out, c)
	}
	return out
}

// rebuild recomputes the merged rules; l.mu must be held.
func (l *LuaInterpreter) rebuild() {
	cs := make([]configv1alpha1.ResourceInterpreterCustomization, 0, len(l.byName))
	for _, c := range l.byName {
		cs = append(cs, c)
	}
	merged := mergeCustomizations(cs)
	l.rules.Store(&merged)
}

func (l *LuaInterpreter) rulesFor(gvk schema.GroupVersionKind) *rules {
	return (*l.rules.Load())[gvk]
}

// HookEnabled reports whether a script exists for gvk and op.
func (l *LuaInterpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	r := l.rulesFor(gvk)
	if r == nil {
		return false
	}
	if op == configv1alpha1.InterpreterOperationInterpretDependency {
		return len(r.dependencies) > 0
	}
	return r.script(op) != ""
}

func (l *LuaInterpreter) scriptFor(obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation) string {
	return l.rulesFor(obj.GroupVersionKind()).script(op)
}

// GetReplicas runs the InterpretReplica script.
func (l *LuaInterpreter) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationInterpretReplica)
	if s == "" {
		return 0, nil, false, nil
	}
	r, req, err := l.vm.GetReplicas(ctx, obj, s)
	return r, req, true, err
}

// GetComponents runs the InterpretComponent script.
func (l *LuaInterpreter) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.Component, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationInterpretComponent)
	if s == "" {
		return nil, false, nil
	}
	comps, err := l.vm.GetComponents(ctx, obj, s)
	return comps, true, err
}

// ReviseReplica runs the ReviseReplica script.
func (l *LuaInterpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationReviseReplica)
	if s == "" {
		return nil, false, nil
	}
	out, err := l.vm.ReviseReplica(ctx, obj, replica, s)
	return out, true, err
}

// Retain runs the Retain script.
func (l *LuaInterpreter) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	s := l.scriptFor(desired, configv1alpha1.InterpreterOperationRetain)
	if s == "" {
		return nil, false, nil
	}
	out, err := l.vm.Retain(ctx, desired, observed, s)
	return out, true, err
}

// AggregateStatus runs the AggregateStatus script.
func (l *LuaInterpreter) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationAggregateStatus)
	if s == "" {
		return nil, false, nil
	}
	out, err := l.vm.AggregateStatus(ctx, obj, items, s)
	return out, true, err
}

// ReflectStatus runs the InterpretStatus script.
func (l *LuaInterpreter) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationInterpretStatus)
	if s == "" {
		return nil, false, nil
	}
	out, err := l.vm.ReflectStatus(ctx, obj, s)
	return out, true, err
}

// InterpretHealth runs the InterpretHealth script.
func (l *LuaInterpreter) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	s := l.scriptFor(obj, configv1alpha1.InterpreterOperationInterpretHealth)
	if s == "" {
		return false, false, nil
	}
	healthy, err := l.vm.InterpretHealth(ctx, obj, s)
	return healthy, true, err
}

// GetDependencies runs every dependency script and merges the results.
func (l *LuaInterpreter) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	r := l.rulesFor(obj.GroupVersionKind())
	if r == nil || len(r.dependencies) == 0 {
		return nil, false, nil
	}
	deps, err := l.vm.GetDependencies(ctx, obj, r.dependencies...)
	return deps, true, err
}
