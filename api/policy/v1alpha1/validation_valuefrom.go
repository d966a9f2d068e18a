package v1alpha1

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateValueFrom checks the valueFrom fields of one rule's overriders:
// each source names exactly one cluster property with a well-formed key;
// an overrider whose value is one item (plaintext, image, fieldOverrider
// operations) takes valueFrom only with add or replace and never together
// with value; labels and annotations take it with add or replace, for keys
// that value does not also set. What a cluster cannot answer (a missing
// label) is known only when rendering for it, and fails that cluster's
// render instead (internal/overrides).
func validateValueFrom(o *Overriders, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range o.Plaintext {
		po := &o.Plaintext[i]
		errs = append(errs, singleValueFrom(po.ValueFrom, po.Operator, len(po.Value) > 0, path.Child("plaintext").Index(i))...)
	}
	for i := range o.ImageOverrider {
		io := &o.ImageOverrider[i]
		errs = append(errs, singleValueFrom(io.ValueFrom, io.Operator, io.Value != "", path.Child("imageOverrider").Index(i))...)
	}
	for _, l := range []struct {
		name string
		list []CommandArgsOverrider
	}{{"commandOverrider", o.CommandOverrider}, {"argsOverrider", o.ArgsOverrider}} {
		for i := range l.list {
			for k := range l.list[i].ValueFrom {
				errs = append(errs, validateSource(&l.list[i].ValueFrom[k], path.Child(l.name).Index(i).Child("valueFrom").Index(k))...)
			}
		}
	}
	for i := range o.LabelsOverrider {
		errs = append(errs, mapValueFrom(&o.LabelsOverrider[i], path.Child("labelsOverrider").Index(i))...)
	}
	for i := range o.AnnotationsOverrider {
		errs = append(errs, mapValueFrom(&o.AnnotationsOverrider[i], path.Child("annotationsOverrider").Index(i))...)
	}
	for i := range o.FieldOverrider {
		errs = append(errs, fieldValueFrom(&o.FieldOverrider[i], path.Child("fieldOverrider").Index(i))...)
	}
	return errs
}

// fieldValueFrom checks the valueFrom of a fieldOverrider's operations.
func fieldValueFrom(fo *FieldOverrider, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, op := range fo.JSON {
		errs = append(errs, singleValueFrom(op.ValueFrom, op.Operator, len(op.Value) > 0, p.Child("json").Index(k))...)
	}
	for k, op := range fo.YAML {
		errs = append(errs, singleValueFrom(op.ValueFrom, op.Operator, len(op.Value) > 0, p.Child("yaml").Index(k))...)
	}
	return errs
}

// singleValueFrom checks the valueFrom of an overrider with one value.
func singleValueFrom(s *ClusterValueSource, op OverriderOperator, hasValue bool, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	vp := p.Child("valueFrom")
	errs := validateSource(s, vp)
	if hasValue {
		errs = append(errs, field.Forbidden(vp, "value and valueFrom can't co-exist: set one"))
	}
	if op != OverriderOpAdd && op != OverriderOpReplace {
		errs = append(errs, field.Forbidden(vp, "valueFrom needs operator add or replace, not "+string(op)))
	}
	return errs
}

// mapValueFrom checks the valueFrom of a labels or annotations overrider:
// its keys are label (or annotation) keys, absent from value.
func mapValueFrom(o *LabelAnnotationOverrider, p *field.Path) field.ErrorList {
	if len(o.ValueFrom) == 0 {
		return nil
	}
	vp := p.Child("valueFrom")
	var errs field.ErrorList
	if o.Operator != OverriderOpAdd && o.Operator != OverriderOpReplace {
		errs = append(errs, field.Forbidden(vp, "valueFrom needs operator add or replace, not "+string(o.Operator)))
	}
	for _, key := range slices.Sorted(maps.Keys(o.ValueFrom)) {
		kp := vp.Key(key)
		errs = append(errs, qualifiedName(kp, key)...)
		if _, dup := o.Value[key]; dup {
			errs = append(errs, field.Duplicate(kp, key))
		}
		s := o.ValueFrom[key]
		errs = append(errs, validateSource(&s, kp)...)
	}
	return errs
}

// validateSource checks that exactly one cluster property is named, and
// that a label or annotation key is a qualified name.
func validateSource(s *ClusterValueSource, p *field.Path) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if s.ClusterName != nil {
		set = append(set, "clusterName")
	}
	if s.ClusterLabel != nil {
		set = append(set, "clusterLabel")
		errs = append(errs, qualifiedName(p.Child("clusterLabel", "key"), s.ClusterLabel.Key)...)
	}
	if s.ClusterAnnotation != nil {
		set = append(set, "clusterAnnotation")
		errs = append(errs, qualifiedName(p.Child("clusterAnnotation", "key"), s.ClusterAnnotation.Key)...)
	}
	switch {
	case len(set) == 0:
		errs = append(errs, field.Required(p, "one of clusterName, clusterLabel or clusterAnnotation"))
	case len(set) > 1:
		errs = append(errs, field.Invalid(p, set, "exactly one of clusterName, clusterLabel or clusterAnnotation may be set"))
	}
	return errs
}
