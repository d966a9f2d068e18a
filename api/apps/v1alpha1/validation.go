package v1alpha1

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SetDefaults sets nothing: Karmada's WorkloadRebalancer has no defaults
// (an unset TTL keeps the object until it is deleted).
func (r *WorkloadRebalancer) SetDefaults() {}

// Validate checks a WorkloadRebalancer: a DNS-subdomain name and no
// namespace (it is cluster-scoped), at least one workload, each with a
// valid apiVersion, a kind and a name (and a DNS-label namespace when one
// is given), and a TTL that is not negative.
func (r *WorkloadRebalancer) Validate() field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if len(r.Spec.Workloads) == 0 {
		errs = append(errs, field.Required(spec.Child("workloads"), "at least one workload"))
	}
	for i, w := range r.Spec.Workloads {
		errs = append(errs, validateReference(w, spec.Child("workloads").Index(i))...)
	}
	if ttl := r.Spec.TTLSecondsAfterFinished; ttl != nil && *ttl < 0 {
		errs = append(errs, field.Invalid(spec.Child("ttlSecondsAfterFinished"), *ttl, "must be greater than or equal to 0"))
	}
	return errs
}

func validateReference(w ObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(w.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), w.APIVersion, err.Error()))
	}
	if w.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if w.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if w.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(w.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), w.Namespace, msg))
		}
	}
	return errs
}
