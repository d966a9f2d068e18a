package thirdparty_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
	"github.com/tetherproj/tether/internal/interpreter/thirdparty"
)

// Short names for the operations.
const (
	retain     = configv1alpha1.InterpreterOperationRetain
	replica    = configv1alpha1.InterpreterOperationInterpretReplica
	revise     = configv1alpha1.InterpreterOperationReviseReplica
	status     = configv1alpha1.InterpreterOperationInterpretStatus
	aggregate  = configv1alpha1.InterpreterOperationAggregateStatus
	health     = configv1alpha1.InterpreterOperationInterpretHealth
	dependency = configv1alpha1.InterpreterOperationInterpretDependency
	component  = configv1alpha1.InterpreterOperationInterpretComponent
)

// wantOperations is, per target, the operations the built-in customization
// defines (interpreter-spec §11). Each project's file (kruise_test.go, ...)
// adds its kinds in an init function, so that projects are added
// independently.
var wantOperations = map[string][]configv1alpha1.InterpreterOperation{}

// allOperations are the operations a RIC can customize, in spec order.
var allOperations = []configv1alpha1.InterpreterOperation{retain, replica, component, revise, status, aggregate, health, dependency}

// functionOf is the global function each operation's script must define.
var functionOf = map[configv1alpha1.InterpreterOperation]string{
	retain: "Retain", replica: "GetReplicas", component: "GetComponents", revise: "ReviseReplica",
	status: "ReflectStatus", aggregate: "AggregateStatus", health: "InterpretHealth", dependency: "GetDependencies",
}

func targetKey(c configv1alpha1.ResourceInterpreterCustomization) string {
	return c.Spec.Target.APIVersion + "/" + c.Spec.Target.Kind
}

// loadAll decodes every embedded file; each must hold exactly one RIC.
func loadAll(t *testing.T) []configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	files, err := thirdparty.Customizations()
	if err != nil {
		t.Fatalf("Customizations() = %v", err)
	}
	var all []configv1alpha1.ResourceInterpreterCustomization
	for _, f := range files {
		cs, err := interpreter.DecodeCustomizations(f.Data)
		if err != nil {
			t.Fatalf("DecodeCustomizations(%s) = %v", f.Name, err)
		}
		if len(cs) != 1 {
			t.Fatalf("%s holds %d customizations; want 1", f.Name, len(cs))
		}
		all = append(all, cs[0])
	}
	return all
}

func TestCustomizationsDefineTheListedOperations(t *testing.T) {
	got := map[string][]configv1alpha1.InterpreterOperation{}
	names := map[string]bool{}
	for _, c := range loadAll(t) {
		if c.Kind != configv1alpha1.KindResourceInterpreterCustomization {
			t.Errorf("%s: kind %q; want %s", c.Name, c.Kind, configv1alpha1.KindResourceInterpreterCustomization)
		}
		if c.APIVersion != configv1alpha1.GroupVersion.String() && c.APIVersion != configv1alpha1.KarmadaGroupVersion.String() {
			t.Errorf("%s: apiVersion %q; want a config group", c.Name, c.APIVersion)
		}
		if !strings.HasPrefix(c.Name, "thirdparty-") || names[c.Name] {
			t.Errorf("name %q: want a unique thirdparty-<project>-<kind>", c.Name)
		}
		names[c.Name] = true
		key := targetKey(c)
		if _, dup := got[key]; dup {
			t.Errorf("target %s customized twice", key)
		}
		got[key] = definedOperations(t, c)
	}
	if diff := cmp.Diff(wantOperations, got); diff != "" {
		t.Errorf("operations per target (-want +got):\n%s", diff)
	}
}

// definedOperations lists the operations the RIC has a script for, checking
// through a LuaInterpreter that each is enabled for its target.
func definedOperations(t *testing.T, c configv1alpha1.ResourceInterpreterCustomization) []configv1alpha1.InterpreterOperation {
	t.Helper()
	l := interpreter.NewLuaInterpreter(luavm.New(luavm.Options{}))
	l.Load([]configv1alpha1.ResourceInterpreterCustomization{c})
	gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
	var ops []configv1alpha1.InterpreterOperation
	for _, op := range allOperations {
		if l.HookEnabled(gvk, op) {
			ops = append(ops, op)
		}
	}
	return ops
}

// TestScriptsValidate compiles every script, runs its top level and checks
// that it defines the operation's function, in the production sandbox.
func TestScriptsValidate(t *testing.T) {
	vm := luavm.New(luavm.Options{})
	for _, c := range loadAll(t) {
		for _, op := range wantOperations[targetKey(c)] {
			t.Run(c.Name+"/"+string(op), func(t *testing.T) {
				s, _ := c.Spec.Customizations.Script(op)
				if err := vm.Validate(context.Background(), s, functionOf[op]); err != nil {
					t.Errorf("Validate(%s) = %v", op, err)
				}
			})
		}
	}
}

func TestCustomizationsSortedAndYAML(t *testing.T) {
	files, err := thirdparty.Customizations()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		if !strings.HasSuffix(f.Name, ".yaml") || len(f.Data) == 0 {
			t.Errorf("file %q (%d bytes): want a non-empty .yaml", f.Name, len(f.Data))
		}
	}
	if !slices.IsSorted(names) || len(names) != len(wantOperations) {
		t.Errorf("Customizations() names = %v; want %d sorted files", names, len(wantOperations))
	}
}
