package v1alpha1

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a PropagationPolicy as Karmada's admission does: metadata
// (a name of at most 63 characters, since Karmada writes it into label
// values), the spec, and selectors that stay in the policy's namespace.
// It then refuses the fields Tether does not implement (RefuseUnsupported).
func (p *PropagationPolicy) Validate() field.ErrorList {
	errs := validatePolicyMeta(&p.ObjectMeta, true)
	errs = append(errs, ValidatePropagationSpec(&p.Spec, p.Namespace, field.NewPath("spec"))...)
	return append(errs, RefuseUnsupported(&p.Spec, field.NewPath("spec"))...)
}

// Validate checks a ClusterPropagationPolicy as Karmada's admission does,
// then refuses the fields Tether does not implement (RefuseUnsupported).
func (p *ClusterPropagationPolicy) Validate() field.ErrorList {
	errs := validatePolicyMeta(&p.ObjectMeta, false)
	errs = append(errs, ValidatePropagationSpec(&p.Spec, "", field.NewPath("spec"))...)
	return append(errs, RefuseUnsupported(&p.Spec, field.NewPath("spec"))...)
}

func validatePolicyMeta(m *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	errs := ValidateObjectMeta(m, namespaced)
	if len(m.Name) > validation.LabelValueMaxLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), m.Name, validation.LabelValueMaxLength))
	}
	return errs
}

// ValidateObjectMeta checks metadata the way Kubernetes does for custom
// resources: the name is required and a DNS-1123 subdomain, the namespace is
// required for namespaced kinds and forbidden otherwise, labels and
// annotations are well formed.
func ValidateObjectMeta(m *metav1.ObjectMeta, namespaced bool) field.ErrorList {
	return apivalidation.ValidateObjectMeta(m, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// ValidatePropagationSpec checks a PropagationSpec by Karmada's rules.
// namespace is the policy's namespace, empty for a ClusterPropagationPolicy.
func ValidatePropagationSpec(s *PropagationSpec, namespace string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validatePropagationSelectors(s, namespace, path.Child("resourceSelectors"))...)
	errs = append(errs, ValidatePlacement(&s.Placement, path.Child("placement"))...)
	errs = append(errs, enum(path.Child("preemption"), s.Preemption, PreemptAlways, PreemptNever)...)
	errs = append(errs, enum(path.Child("conflictResolution"), s.ConflictResolution, ConflictAbort, ConflictOverwrite)...)
	errs = append(errs, enum(path.Child("activationPreference"), s.ActivationPreference, LazyActivation)...)
	errs = append(errs, validateFailover(s, path)...)
	errs = append(errs, validateSuspension(s.Suspension, path.Child("suspension"))...)
	errs = append(errs, validateSchedulePriority(s.SchedulePriority, path.Child("schedulePriority"))...)
	return errs
}

func validatePropagationSelectors(s *PropagationSpec, namespace string, path *field.Path) field.ErrorList {
	if len(s.ResourceSelectors) == 0 {
		return field.ErrorList{field.Required(path, "at least one resource selector is required")}
	}
	errs := ValidateResourceSelectors(s.ResourceSelectors, namespace, path)
	if s.Preemption != PreemptAlways {
		return errs
	}
	for i, rs := range s.ResourceSelectors {
		if rs.Name == "" {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), rs.Name,
				"name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption"))
		}
	}
	return errs
}

// ValidateResourceSelectors checks selectors: apiVersion and kind are
// required, the label selector is well formed and, for a namespaced policy
// (namespace not empty), a selector's namespace is the policy's namespace.
func ValidateResourceSelectors(selectors []ResourceSelector, namespace string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range selectors {
		rs, p := &selectors[i], path.Index(i)
		errs = append(errs, validateAPIVersionKind(rs.APIVersion, rs.Kind, p)...)
		if namespace != "" && rs.Namespace != "" && rs.Namespace != namespace {
			errs = append(errs, field.Invalid(p.Child("namespace"), rs.Namespace,
				fmt.Sprintf("must be the policy's namespace %q", namespace)))
		}
		errs = append(errs, validateLabelSelector(rs.LabelSelector, p.Child("labelSelector"))...)
	}
	return errs
}

func validateAPIVersionKind(apiVersion, kind string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if apiVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), apiVersion, err.Error()))
	}
	if kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	}
	return errs
}

func validateLabelSelector(sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

func validateFailover(s *PropagationSpec, path *field.Path) field.ErrorList {
	if s.Failover == nil {
		return nil
	}
	fpath := path.Child("failover")
	var errs field.ErrorList
	if app := s.Failover.Application; app != nil {
		if !s.PropagateDeps {
			errs = append(errs, field.Invalid(path.Child("propagateDeps"), s.PropagateDeps,
				"application failover is set, propagateDeps must be true"))
		}
		errs = append(errs, ValidateApplicationFailover(app, fpath.Child("application"))...)
	}
	if c := s.Failover.Cluster; c != nil {
		cpath := fpath.Child("cluster")
		errs = append(errs, enum(cpath.Child("purgeMode"), c.PurgeMode, PurgeModeDirectly, PurgeModeGracefully)...)
		errs = append(errs, validateStatePreservation(c.StatePreservation, cpath.Child("statePreservation"))...)
	}
	return errs
}

// ValidateApplicationFailover checks an application failover: a
// non-negative tolerationSeconds, a known purge mode, and a
// gracePeriodSeconds that is positive and set only with PurgeMode
// Gracefully. An empty purge mode counts as its default, Gracefully, and a
// missing gracePeriodSeconds as its default, so that the result is the same
// before and after SetDefaults.
func ValidateApplicationFailover(app *ApplicationFailoverBehavior, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ts := app.DecisionConditions.TolerationSeconds; ts != nil && *ts < 0 {
		errs = append(errs, field.Invalid(path.Child("decisionConditions", "tolerationSeconds"), *ts,
			"must be greater than or equal to 0"))
	}
	errs = append(errs, enum(path.Child("purgeMode"), app.PurgeMode, PurgeModeDirectly, PurgeModeGracefully,
		PurgeModeNever, PurgeModeImmediately, PurgeModeGraciously)...)
	graceful := app.PurgeMode == "" || app.PurgeMode.IsGraceful()
	if grace := app.GracePeriodSeconds; grace != nil {
		gpath := path.Child("gracePeriodSeconds")
		if !graceful {
			errs = append(errs, field.Invalid(gpath, *grace, "only takes effect when purgeMode is gracefully"))
		} else if *grace <= 0 {
			errs = append(errs, field.Invalid(gpath, *grace, "must be greater than 0"))
		}
	}
	return append(errs, validateStatePreservation(app.StatePreservation, path.Child("statePreservation"))...)
}

func validateStatePreservation(sp *StatePreservation, path *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	rpath := path.Child("rules")
	if len(sp.Rules) == 0 {
		return field.ErrorList{field.Required(rpath, "")}
	}
	var errs field.ErrorList
	for i, r := range sp.Rules {
		p := rpath.Index(i)
		errs = append(errs, qualifiedName(p.Child("aliasLabelName"), r.AliasLabelName)...)
		if r.JSONPath == "" {
			errs = append(errs, field.Required(p.Child("jsonPath"), ""))
		}
	}
	return errs
}

func validateSuspension(s *Suspension, path *field.Path) field.ErrorList {
	if s == nil || s.Dispatching == nil || !*s.Dispatching || s.DispatchingOnClusters == nil ||
		len(s.DispatchingOnClusters.ClusterNames) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, "dispatching: true",
		"suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")}
}

func validateSchedulePriority(sp *SchedulePriority, path *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	if sp.PriorityClassSource == "" {
		errs = append(errs, field.Required(path.Child("priorityClassSource"), ""))
	}
	errs = append(errs, enum(path.Child("priorityClassSource"), sp.PriorityClassSource, KubePriorityClass)...)
	if sp.PriorityClassName == "" {
		errs = append(errs, field.Required(path.Child("priorityClassName"), ""))
	}
	return errs
}

// enum reports a non-empty v that is not one of allowed.
func enum[T ~string](path *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, v, allowed)}
}

// qualifiedName reports an empty name or one that is not a qualified name
// (label-key syntax: an optional DNS subdomain prefix and a name part).
func qualifiedName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
