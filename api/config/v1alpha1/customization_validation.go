package v1alpha1

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a ResourceInterpreterCustomization on its own: metadata,
// a target with an apiVersion and a kind, at least one customization, and a
// script in each customization that is set. Lua syntax is checked by the
// interpreter, and conflicts with other customizations by
// ValidateCustomizationConflicts.
func (c *ResourceInterpreterCustomization) Validate() field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain,
		field.NewPath("metadata"))
	spec := field.NewPath("spec")
	errs = append(errs, validateTarget(c.Spec.Target, spec.Child("target"))...)
	return append(errs, validateCustomizationRules(&c.Spec.Customizations, spec.Child("customizations"))...)
}

func validateTarget(t CustomizationTarget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case t.APIVersion == "":
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	case strings.Contains(t.APIVersion, "*"):
		errs = append(errs, field.Invalid(path.Child("apiVersion"), t.APIVersion, "wildcards are not supported"))
	default:
		if _, err := schema.ParseGroupVersion(t.APIVersion); err != nil {
			errs = append(errs, field.Invalid(path.Child("apiVersion"), t.APIVersion, err.Error()))
		}
	}
	switch {
	case t.Kind == "":
		errs = append(errs, field.Required(path.Child("kind"), ""))
	case strings.Contains(t.Kind, "*"):
		errs = append(errs, field.Invalid(path.Child("kind"), t.Kind, "wildcards are not supported"))
	}
	return errs
}

func validateCustomizationRules(r *CustomizationRules, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	for _, f := range customizationFields {
		script, ok := f.script(r)
		if !ok {
			continue
		}
		set++
		if strings.TrimSpace(script) == "" {
			errs = append(errs, field.Required(path.Child(f.name, "luaScript"), ""))
		}
	}
	if set == 0 {
		errs = append(errs, field.Required(path, "at least one customization is required"))
	}
	return errs
}

// ValidateCustomizationConflicts reports, as Karmada's admission does, every
// operation that c and another customization in existing with the same
// target both define, except InterpretDependency (whose scripts all run).
// Customizations in existing named like c are skipped, so that an update
// does not conflict with its old version.
func ValidateCustomizationConflicts(c *ResourceInterpreterCustomization, existing []ResourceInterpreterCustomization) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "customizations")
	for i := range existing {
		other := &existing[i]
		if other.Name == c.Name || other.Spec.Target != c.Spec.Target {
			continue
		}
		for _, f := range customizationFields {
			if f.op == InterpreterOperationInterpretDependency {
				continue
			}
			_, mine := f.script(&c.Spec.Customizations)
			_, theirs := f.script(&other.Spec.Customizations)
			if mine && theirs {
				errs = append(errs, field.Invalid(path.Child(f.name), f.op, fmt.Sprintf(
					"conflicting with InterpreterOperation(%s) of existing ResourceInterpreterCustomization(%s)",
					f.op, other.Name)))
			}
		}
	}
	return errs
}
