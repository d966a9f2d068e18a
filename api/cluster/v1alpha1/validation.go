package v1alpha1

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SetDefaults sorts the resource models by grade, as Karmada's admission
// does. It sets no default models (Karmada's admission adds nine default
// grades when there are none): without models the scheduler estimates from
// the resource summary alone.
func (c *Cluster) SetDefaults() {
	sort.SliceStable(c.Spec.ResourceModels, func(i, j int) bool {
		return c.Spec.ResourceModels[i].Grade < c.Spec.ResourceModels[j].Grade
	})
}

// Validate checks a Cluster: its name is a DNS-1123 label (it names the
// agent's certificate identity), taints are well formed and unique by key
// and effect, and resource models form contiguous grades.
func (c *Cluster) Validate() field.ErrorList {
	meta := field.NewPath("metadata")
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSLabel, meta)
	spec := field.NewPath("spec")
	errs = append(errs, ValidateTaints(c.Spec.Taints, spec.Child("taints"))...)
	return append(errs, ValidateResourceModels(c.Spec.ResourceModels, spec.Child("resourceModels"))...)
}

// ValidateTaints checks taints: a qualified-name key, a label-value value, a
// known effect, and no two taints with the same key and effect.
func ValidateTaints(taints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(taints))
	for i, t := range taints {
		p := path.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		errs = append(errs, validateEffect(t.Effect, p.Child("effect"))...)
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s:%s", t.Key, t.Effect)))
		}
		seen[id] = true
	}
	return errs
}

func validateEffect(e corev1.TaintEffect, path *field.Path) field.ErrorList {
	switch e {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	default:
		return field.ErrorList{field.NotSupported(path, e, []corev1.TaintEffect{
			corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute})}
	}
}

// ValidateResourceModels checks resource models as Karmada does: grades are
// distinct, every model has the same resources in the same order, each range
// has max > min, the first model's ranges start at 0 and each model's
// ranges start where the previous model's end. Models are compared in grade
// order, whatever their order in the list (SetDefaults sorts them); paths
// name their position in the list.
func ValidateResourceModels(models []ResourceModel, path *field.Path) field.ErrorList {
	order := make([]int, len(models))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return models[order[a]].Grade < models[order[b]].Grade })
	var errs field.ErrorList
	for n, i := range order {
		m, p := &models[i], path.Index(i)
		if len(m.Ranges) == 0 {
			errs = append(errs, field.Required(p.Child("ranges"), ""))
		}
		if n > 0 {
			errs = append(errs, compareModels(&models[order[n-1]], m, p)...)
		}
		for j := range m.Ranges {
			r, rp := &m.Ranges[j], p.Child("ranges").Index(j)
			if r.Name == "" {
				errs = append(errs, field.Required(rp.Child("name"), ""))
			}
			if r.Max.Cmp(r.Min) <= 0 {
				errs = append(errs, field.Invalid(rp.Child("max"), r.Max.String(), "must be greater than min"))
			}
			if n == 0 && !r.Min.IsZero() {
				errs = append(errs, field.Invalid(rp.Child("min"), r.Min.String(), "must be 0 in the first model"))
			}
		}
	}
	return errs
}

func compareModels(prev, m *ResourceModel, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Grade == prev.Grade {
		errs = append(errs, field.Duplicate(p.Child("grade"), m.Grade))
	}
	if len(m.Ranges) != len(prev.Ranges) {
		return append(errs, field.Invalid(p.Child("ranges"), len(m.Ranges),
			"every model must have the same resources as the previous one"))
	}
	for j := range m.Ranges {
		rp := p.Child("ranges").Index(j)
		if m.Ranges[j].Name != prev.Ranges[j].Name {
			errs = append(errs, field.Invalid(rp.Child("name"), m.Ranges[j].Name,
				fmt.Sprintf("must be %q, the resource of the previous model at this position", prev.Ranges[j].Name)))
			continue
		}
		if m.Ranges[j].Min.Cmp(prev.Ranges[j].Max) != 0 {
			errs = append(errs, field.Invalid(rp.Child("min"), m.Ranges[j].Min.String(),
				fmt.Sprintf("must equal the previous model's max %s (ranges must be contiguous)", prev.Ranges[j].Max.String())))
		}
	}
	return errs
}
