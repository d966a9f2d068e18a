package interpreter

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func deployment(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(1)},
		"spec":     map[string]any{"replicas": replicas},
	}}
}

func ric(name, apiVersion, kind string, rules configv1alpha1.CustomizationRules) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target:         configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
			Customizations: rules,
		},
	}
}

func newTestInterpreter(t *testing.T, thirdParty ...configv1alpha1.ResourceInterpreterCustomization) *Interpreter {
	t.Helper()
	if thirdParty == nil {
		thirdParty = []configv1alpha1.ResourceInterpreterCustomization{}
	}
	i, err := New(Config{ThirdParty: thirdParty}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return i
}

func TestPrecedence(t *testing.T) {
	ctx := context.Background()
	third := ric("third", "apps/v1", "Deployment", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `function GetReplicas(o) return 30, nil end`},
	})
	i := newTestInterpreter(t, *third)

	// Native only: spec.replicas.
	i.thirdParty.Load(nil)
	if r, _, err := i.GetReplicas(ctx, deployment(2)); err != nil || r != 2 {
		t.Fatalf("GetReplicas(native) = %d, %v; want 2", r, err)
	}
	// Third-party Lua beats native.
	i.thirdParty.Load([]configv1alpha1.ResourceInterpreterCustomization{*third})
	if r, _, err := i.GetReplicas(ctx, deployment(2)); err != nil || r != 30 {
		t.Fatalf("GetReplicas(third-party) = %d, %v; want 30", r, err)
	}
	// A RIC beats third-party.
	if err := i.ApplyCustomization(ctx, ric("user", "apps/v1", "Deployment", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `function GetReplicas(o) return o.spec.replicas * 100, nil end`},
	})); err != nil {
		t.Fatalf("ApplyCustomization: %v", err)
	}
	if r, _, err := i.GetReplicas(ctx, deployment(2)); err != nil || r != 200 {
		t.Fatalf("GetReplicas(RIC) = %d, %v; want 200", r, err)
	}
	// Errors stop the chain: the RIC fails at runtime, nothing falls through.
	i.LoadCustomizations([]configv1alpha1.ResourceInterpreterCustomization{*ric("user", "apps/v1", "Deployment", configv1alpha1.CustomizationRules{
		ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `function GetReplicas(o) error("boom") end`},
	})})
	if _, _, err := i.GetReplicas(ctx, deployment(2)); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("GetReplicas(failing RIC) error = %v; want the RIC's error", err)
	}
	// Removing the RIC gives the third-party answer back.
	i.RemoveCustomization("user")
	if r, _, err := i.GetReplicas(ctx, deployment(2)); err != nil || r != 30 {
		t.Fatalf("GetReplicas(after remove) = %d, %v; want 30", r, err)
	}
}

func TestHookEnabledAndSpecialCases(t *testing.T) {
	ctx := context.Background()
	i := newTestInterpreter(t)
	crd := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Thing"}
	thing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "t"}}}

	if i.HookEnabled(crd, configv1alpha1.InterpreterOperationInterpretHealth) {
		t.Errorf("HookEnabled(Thing, health) = true; want false")
	}
	if !i.HookEnabled(crd, configv1alpha1.InterpreterOperationInterpretStatus) {
		t.Errorf("HookEnabled(Thing, status) = false; want true (native whole-status fallback)")
	}
	// Health with no hook is Healthy.
	if h := i.Health(ctx, thing); h != configv1alpha1.ResourceHealthy {
		t.Errorf("Health(no hook) = %s; want Healthy", h)
	}
	// GetComponents never consults native.
	if _, err := i.GetComponents(ctx, deployment(1)); err != ErrComponentsNotImplemented {
		t.Errorf("GetComponents(Deployment) error = %v; want %v", err, ErrComponentsNotImplemented)
	}
	if _, err := i.GetComponents(ctx, nil); err == nil {
		t.Errorf("GetComponents(nil) error = nil; want an error")
	}
	if err := i.ApplyCustomization(ctx, ric("thing", "example.io/v1", "Thing", configv1alpha1.CustomizationRules{
		HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(o) return o.status ~= nil end`},
		ComponentResource:    &configv1alpha1.ComponentResourceRequirement{LuaScript: `function GetComponents(o) return {{name = "main", replicas = 2}} end`},
	})); err != nil {
		t.Fatal(err)
	}
	if !i.HookEnabled(crd, configv1alpha1.InterpreterOperationInterpretHealth) {
		t.Errorf("HookEnabled(Thing, health) after RIC = false; want true")
	}
	if h := i.Health(ctx, thing); h != configv1alpha1.ResourceUnhealthy {
		t.Errorf("Health(no status) = %s; want Unhealthy", h)
	}
	comps, err := i.GetComponents(ctx, thing)
	if err != nil || len(comps) != 1 || comps[0].Name != "main" || comps[0].Replicas != 2 {
		t.Errorf("GetComponents(Thing) = %+v, %v; want [main 2]", comps, err)
	}
}

func TestMergeRules(t *testing.T) {
	ctx := context.Background()
	l := NewLuaInterpreter(newTestInterpreter(t).vm)
	l.Load([]configv1alpha1.ResourceInterpreterCustomization{
		*ric("b", "example.io/v1", "Thing", configv1alpha1.CustomizationRules{
			HealthInterpretation:     &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(o) return false end`},
			DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: `function GetDependencies(o) return {{apiVersion = "v1", kind = "Secret", name = "b"}} end`},
		}),
		*ric("a", "example.io/v1", "Thing", configv1alpha1.CustomizationRules{
			HealthInterpretation:     &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(o) return true end`},
			DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: `function GetDependencies(o) return {{apiVersion = "v1", kind = "ConfigMap", name = "a"}, {apiVersion = "v1", kind = "Secret", name = "b"}} end`},
		}),
		*ric("c", "example.io/v1", "Thing", configv1alpha1.CustomizationRules{Retention: &configv1alpha1.LocalValueRetention{LuaScript: ""}}),
	})
	thing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Thing"}}
	// The first RIC by name wins for single-script operations.
	if h, ok, err := l.InterpretHealth(ctx, thing); !ok || err != nil || !h {
		t.Errorf("InterpretHealth = %t, %t, %v; want RIC a's true", h, ok, err)
	}
	// All dependency scripts run; results are deduplicated and sorted.
	deps, ok, err := l.GetDependencies(ctx, thing)
	if !ok || err != nil || len(deps) != 2 || deps[0].Kind != "ConfigMap" || deps[1].Name != "b" {
		t.Errorf("GetDependencies = %+v, %t, %v; want ConfigMap a, Secret b", deps, ok, err)
	}
	// An empty script does not enable the operation.
	if l.HookEnabled(thing.GroupVersionKind(), configv1alpha1.InterpreterOperationRetain) {
		t.Errorf("HookEnabled(Retain with empty script) = true; want false")
	}
}

func TestValidateCustomization(t *testing.T) {
	ctx := context.Background()
	i := newTestInterpreter(t)
	tests := []struct {
		name    string
		rules   configv1alpha1.CustomizationRules
		wantErr string
	}{
		{"syntax", configv1alpha1.CustomizationRules{HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o)\n  local = 1\nend"}},
			"<string> line:2(column:9) near '=':   syntax error"},
		{"missing function", configv1alpha1.CustomizationRules{ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `function GetReplica(o) return 1 end`}},
			"not found function GetReplicas"},
		{"top-level error", configv1alpha1.CustomizationRules{Retention: &configv1alpha1.LocalValueRetention{LuaScript: "local x = nil\nlocal y = x.field\nfunction Retain(d, o) return d end"}},
			"<string>:2: attempt to index a non-table object(nil) with key 'field'"},
		{"endless loop in dry run", configv1alpha1.CustomizationRules{StatusReflection: &configv1alpha1.StatusReflection{LuaScript: `function ReflectStatus(o) while true do end end`}},
			"dry run: <string>:1: context deadline exceeded"},
		{"valid", configv1alpha1.CustomizationRules{StatusReflection: &configv1alpha1.StatusReflection{LuaScript: `function ReflectStatus(o) return o.status.x end`}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := i.ApplyCustomization(ctx, ric("v-"+tt.name, "example.io/v1", "V"+strings.ReplaceAll(tt.name, " ", ""), tt.rules))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ApplyCustomization(%s) = %v; want nil", tt.name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ApplyCustomization(%s) = %v; want an error containing %q", tt.name, err, tt.wantErr)
			}
		})
	}
	// Two RICs of one target may not define the same operation.
	rules := configv1alpha1.CustomizationRules{HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(o) return true end`}}
	if err := i.ApplyCustomization(ctx, ric("one", "example.io/v1", "Dup", rules)); err != nil {
		t.Fatal(err)
	}
	err := i.ApplyCustomization(ctx, ric("two", "example.io/v1", "Dup", rules))
	if err == nil || err.Error() != "conflicting with InterpreterOperation(InterpretHealth) of existing ResourceInterpreterCustomization(one)" {
		t.Fatalf("ApplyCustomization(conflict) = %v; want Karmada's conflict error", err)
	}
}

func TestBuiltinLoading(t *testing.T) {
	if _, err := BuiltinCustomizations(); err != nil {
		t.Fatalf("BuiltinCustomizations: %v", err)
	}
	fsys := fstest.MapFS{
		"builtin/apps.kruise.io/v1alpha1/CloneSet/customizations.yaml": {Data: []byte(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: declarative-configuration-cloneset
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  customizations:
    healthInterpretation:
      luaScript: >
        function InterpretHealth(observedObj)
          return true
        end
`)},
		"builtin/apps.kruise.io/v1alpha1/CloneSet/testdata/health-test.yaml": {Data: []byte("name: x\n")},
		"builtin/README.md": {Data: []byte("docs")},
	}
	cs, err := loadCustomizationsFS(fsys, "builtin")
	if err != nil {
		t.Fatalf("loadCustomizationsFS: %v", err)
	}
	if len(cs) != 1 || targetGVK(&cs[0]).Kind != "CloneSet" || !strings.Contains(cs[0].Spec.Customizations.HealthInterpretation.LuaScript, "return true") {
		t.Fatalf("loadCustomizationsFS = %+v; want the CloneSet RIC", cs)
	}
}
