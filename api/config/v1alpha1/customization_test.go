package v1alpha1

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func baseRIC(name string) *ResourceInterpreterCustomization {
	return &ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ResourceInterpreterCustomizationSpec{
			Target: CustomizationTarget{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet"},
			Customizations: CustomizationRules{
				ReplicaResource: &ReplicaResourceRequirement{LuaScript: "function GetReplicas(obj) return 1 end"},
			},
		},
	}
}

func TestValidateCustomization(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ResourceInterpreterCustomization)
		want   []string
		detail string
	}{
		{"valid", func(*ResourceInterpreterCustomization) {}, nil, ""},
		{"core group target", func(c *ResourceInterpreterCustomization) {
			c.Spec.Target = CustomizationTarget{APIVersion: "v1", Kind: "Pod"}
		}, nil, ""},
		{"no apiVersion", func(c *ResourceInterpreterCustomization) { c.Spec.Target.APIVersion = "" },
			[]string{"spec.target.apiVersion"}, "Required"},
		{"malformed apiVersion", func(c *ResourceInterpreterCustomization) { c.Spec.Target.APIVersion = "a/b/c" },
			[]string{"spec.target.apiVersion"}, "unexpected GroupVersion string"},
		{"wildcard kind", func(c *ResourceInterpreterCustomization) { c.Spec.Target.Kind = "*" },
			[]string{"spec.target.kind"}, "wildcards are not supported"},
		{"no kind", func(c *ResourceInterpreterCustomization) { c.Spec.Target.Kind = "" },
			[]string{"spec.target.kind"}, "Required"},
		{"no customization", func(c *ResourceInterpreterCustomization) { c.Spec.Customizations = CustomizationRules{} },
			[]string{"spec.customizations"}, "at least one customization is required"},
		{"empty script", func(c *ResourceInterpreterCustomization) {
			c.Spec.Customizations.StatusAggregation = &StatusAggregation{LuaScript: " \n"}
		}, []string{"spec.customizations.statusAggregation.luaScript"}, "Required"},
		{"namespace", func(c *ResourceInterpreterCustomization) { c.Namespace = "default" },
			[]string{"metadata.namespace"}, "not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseRIC("ric")
			tt.mutate(c)
			assertErrors(t, tt.name, c.Validate(), tt.want, tt.detail)
		})
	}
}

func TestCustomizationScripts(t *testing.T) {
	r := CustomizationRules{
		Retention:                &LocalValueRetention{LuaScript: "retain"},
		ComponentResource:        &ComponentResourceRequirement{LuaScript: "components"},
		HealthInterpretation:     &HealthInterpretation{LuaScript: "health"},
		DependencyInterpretation: &DependencyInterpretation{LuaScript: "deps"},
	}
	want := []InterpreterOperation{InterpreterOperationRetain, InterpreterOperationInterpretComponent,
		InterpreterOperationInterpretHealth, InterpreterOperationInterpretDependency}
	if diff := cmp.Diff(want, r.Operations()); diff != "" {
		t.Errorf("Operations() differs (-want +got):\n%s", diff)
	}
	tests := []struct {
		op     InterpreterOperation
		script string
		ok     bool
	}{
		{InterpreterOperationRetain, "retain", true},
		{InterpreterOperationInterpretComponent, "components", true},
		{InterpreterOperationInterpretDependency, "deps", true},
		{InterpreterOperationInterpretReplica, "", false},
		{InterpreterOperationPrune, "", false},
	}
	for _, tt := range tests {
		if script, ok := r.Script(tt.op); script != tt.script || ok != tt.ok {
			t.Errorf("Script(%s) = %q, %v; want %q, %v", tt.op, script, ok, tt.script, tt.ok)
		}
	}
}

func TestValidateCustomizationConflicts(t *testing.T) {
	b := baseRIC("b")
	b.Spec.Customizations.DependencyInterpretation = &DependencyInterpretation{LuaScript: "function GetDependencies(o) return {} end"}
	other := baseRIC("other-target")
	other.Spec.Target.Kind = "Advanced"
	existing := []ResourceInterpreterCustomization{*b, *other, *baseRIC("c")}

	c := baseRIC("c") // an update of c: itself is not a conflict
	c.Spec.Customizations.DependencyInterpretation = &DependencyInterpretation{LuaScript: "function GetDependencies(o) return {} end"}
	errs := ValidateCustomizationConflicts(c, existing)
	wantMsg := "conflicting with InterpreterOperation(InterpretReplica) of existing ResourceInterpreterCustomization(b)"
	if len(errs) != 1 || errs[0].Field != "spec.customizations.replicaResource" || !strings.Contains(errs[0].Error(), wantMsg) {
		t.Errorf("ValidateCustomizationConflicts(c) = %v; want one error at spec.customizations.replicaResource saying %q", errs, wantMsg)
	}
	c.Spec.Customizations.ReplicaResource = nil
	if errs := ValidateCustomizationConflicts(c, existing); len(errs) != 0 {
		t.Errorf("ValidateCustomizationConflicts(dependencies only) = %v; want none (dependency scripts merge)", errs)
	}
}

// assertErrors checks that errs are at the paths want, in order, and that
// the first one contains detail.
func assertErrors(t *testing.T, name string, errs field.ErrorList, want []string, detail string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Validate(%s) = %v; want errors at %v", name, errs, want)
		return
	}
	if detail != "" && !strings.Contains(errs[0].Error(), detail) {
		t.Errorf("Validate(%s) = %v; want the error to say %q", name, errs[0], detail)
	}
}
