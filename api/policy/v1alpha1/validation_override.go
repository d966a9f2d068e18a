package v1alpha1

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks an OverridePolicy: metadata, the spec, and selectors that
// stay in the policy's namespace.
func (p *OverridePolicy) Validate() field.ErrorList {
	errs := ValidateObjectMeta(&p.ObjectMeta, true)
	return append(errs, ValidateOverrideSpec(&p.Spec, p.Namespace, field.NewPath("spec"))...)
}

// Validate checks a ClusterOverridePolicy.
func (p *ClusterOverridePolicy) Validate() field.ErrorList {
	errs := ValidateObjectMeta(&p.ObjectMeta, false)
	return append(errs, ValidateOverrideSpec(&p.Spec, "", field.NewPath("spec"))...)
}

// ValidateOverrideSpec checks an OverrideSpec: overrideRules exclude the
// deprecated targetCluster and overriders, cluster filters are well formed,
// and every overrider has its required fields and a supported operator,
// and uses valueFrom where it can apply (validateValueFrom).
// namespace is the policy's namespace, empty for a ClusterOverridePolicy.
func ValidateOverrideSpec(s *OverrideSpec, namespace string, path *field.Path) field.ErrorList {
	errs := ValidateResourceSelectors(s.ResourceSelectors, namespace, path.Child("resourceSelectors"))
	if len(s.OverrideRules) > 0 && (s.TargetCluster != nil || !s.Overriders.IsEmpty()) {
		errs = append(errs, field.Forbidden(path.Child("overrideRules"),
			"overrideRules and (overriders or targetCluster) can't co-exist"))
	}
	if s.TargetCluster != nil {
		errs = append(errs, ValidateClusterAffinity(s.TargetCluster, path.Child("targetCluster"))...)
	}
	errs = append(errs, ValidateOverriders(&s.Overriders, path.Child("overriders"))...)
	for i := range s.OverrideRules {
		r, p := &s.OverrideRules[i], path.Child("overrideRules").Index(i)
		if r.TargetCluster != nil {
			errs = append(errs, ValidateClusterAffinity(r.TargetCluster, p.Child("targetCluster"))...)
		}
		errs = append(errs, ValidateOverriders(&r.Overriders, p.Child("overriders"))...)
	}
	return errs
}

// ValidateOverriders checks every overrider of one rule.
func ValidateOverriders(o *Overriders, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, po := range o.Plaintext {
		p := path.Child("plaintext").Index(i)
		errs = append(errs, required(p.Child("path"), po.Path)...)
		errs = append(errs, operator(p.Child("operator"), po.Operator, OverriderOpAdd, OverriderOpRemove, OverriderOpReplace)...)
	}
	for i, io := range o.ImageOverrider {
		errs = append(errs, validateImageOverrider(&io, path.Child("imageOverrider").Index(i))...)
	}
	errs = append(errs, validateCommandArgs(o.CommandOverrider, path.Child("commandOverrider"))...)
	errs = append(errs, validateCommandArgs(o.ArgsOverrider, path.Child("argsOverrider"))...)
	for i, lo := range o.LabelsOverrider {
		p := path.Child("labelsOverrider").Index(i)
		errs = append(errs, operator(p.Child("operator"), lo.Operator, OverriderOpAdd, OverriderOpRemove, OverriderOpReplace)...)
		errs = append(errs, metav1validation.ValidateLabels(lo.Value, p.Child("value"))...)
	}
	for i, ao := range o.AnnotationsOverrider {
		p := path.Child("annotationsOverrider").Index(i)
		errs = append(errs, operator(p.Child("operator"), ao.Operator, OverriderOpAdd, OverriderOpRemove, OverriderOpReplace)...)
		errs = append(errs, apivalidation.ValidateAnnotations(ao.Value, p.Child("value"))...)
	}
	for i := range o.FieldOverrider {
		errs = append(errs, validateFieldOverrider(&o.FieldOverrider[i], path.Child("fieldOverrider").Index(i))...)
	}
	return append(errs, validateValueFrom(o, path)...)
}

func validateImageOverrider(io *ImageOverrider, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if io.Predicate != nil {
		errs = append(errs, required(p.Child("predicate", "path"), io.Predicate.Path)...)
	}
	if io.Component == "" {
		errs = append(errs, field.Required(p.Child("component"), ""))
	}
	errs = append(errs, enum(p.Child("component"), io.Component, Registry, Repository, Tag)...)
	return append(errs, operator(p.Child("operator"), io.Operator, OverriderOpAdd, OverriderOpRemove, OverriderOpReplace)...)
}

func validateCommandArgs(overriders []CommandArgsOverrider, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, co := range overriders {
		p := path.Index(i)
		errs = append(errs, required(p.Child("containerName"), co.ContainerName)...)
		errs = append(errs, operator(p.Child("operator"), co.Operator, OverriderOpAdd, OverriderOpRemove)...)
	}
	return errs
}

func validateFieldOverrider(fo *FieldOverrider, p *field.Path) field.ErrorList {
	errs := required(p.Child("fieldPath"), fo.FieldPath)
	switch {
	case len(fo.JSON) > 0 && len(fo.YAML) > 0:
		errs = append(errs, field.Invalid(p, fo.FieldPath, "FieldOverrider has both YAML and JSON set. Only one is allowed"))
	case len(fo.JSON) == 0 && len(fo.YAML) == 0:
		errs = append(errs, field.Invalid(p, fo.FieldPath, "FieldOverrider must have either YAML or JSON set"))
	}
	for i, op := range fo.JSON {
		errs = append(errs, validatePatchOp(op.SubPath, op.Operator, p.Child("json").Index(i))...)
	}
	for i, op := range fo.YAML {
		errs = append(errs, validatePatchOp(op.SubPath, op.Operator, p.Child("yaml").Index(i))...)
	}
	return errs
}

func validatePatchOp(subPath string, op OverriderOperator, p *field.Path) field.ErrorList {
	errs := required(p.Child("subPath"), subPath)
	return append(errs, operator(p.Child("operator"), op, OverriderOpAdd, OverriderOpRemove, OverriderOpReplace)...)
}

// operator reports a missing operator or one that is not allowed.
func operator(path *field.Path, op OverriderOperator, allowed ...OverriderOperator) field.ErrorList {
	if op == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return enum(path, op, allowed...)
}

// required reports an empty string.
func required(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return nil
}
