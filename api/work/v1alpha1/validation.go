package v1alpha1

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// SetDefaults does nothing: bindings are written by the hub, complete. It
// exists so that every object has the same methods.
func (b *ResourceBinding) SetDefaults() {}

// SetDefaults does nothing; see ResourceBinding.SetDefaults.
func (b *ClusterResourceBinding) SetDefaults() {}

// Validate checks a ResourceBinding: metadata, the template reference, the
// placement, non-negative replicas, and unique named target clusters.
func (b *ResourceBinding) Validate() field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, true, apivalidation.NameIsDNSSubdomain,
		field.NewPath("metadata"))
	return append(errs, ValidateBinding(&b.Spec, &b.Status)...)
}

// Validate checks a ClusterResourceBinding like a ResourceBinding.
func (b *ClusterResourceBinding) Validate() field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, false, apivalidation.NameIsDNSSubdomain,
		field.NewPath("metadata"))
	return append(errs, ValidateBinding(&b.Spec, &b.Status)...)
}

// ValidateBinding checks the spec and status of a binding.
func ValidateBinding(spec *ResourceBindingSpec, status *ResourceBindingStatus) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateReference(&spec.Resource, path.Child("resource"))
	if spec.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), spec.Replicas, "must be greater than or equal to 0"))
	}
	if spec.Placement != nil {
		errs = append(errs, policyv1alpha1.ValidatePlacement(spec.Placement, path.Child("placement"))...)
	}
	errs = append(errs, validateTargetClusters(spec.Clusters, path.Child("clusters"))...)
	for i, task := range spec.GracefulEvictionTasks {
		p := path.Child("gracefulEvictionTasks").Index(i)
		errs = append(errs, required(p.Child("fromCluster"), task.FromCluster)...)
		errs = append(errs, required(p.Child("reason"), task.Reason)...)
		errs = append(errs, required(p.Child("producer"), task.Producer)...)
	}
	for i, item := range status.AggregatedStatus {
		p := field.NewPath("status", "aggregatedStatus").Index(i)
		errs = append(errs, required(p.Child("clusterName"), item.ClusterName)...)
	}
	return errs
}

func validateReference(ref *ObjectReference, path *field.Path) field.ErrorList {
	errs := required(path.Child("apiVersion"), ref.APIVersion)
	errs = append(errs, required(path.Child("kind"), ref.Kind)...)
	return append(errs, required(path.Child("name"), ref.Name)...)
}

func validateTargetClusters(clusters []TargetCluster, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(clusters))
	for i, tc := range clusters {
		p := path.Index(i)
		errs = append(errs, required(p.Child("name"), tc.Name)...)
		if seen[tc.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), tc.Name))
		}
		seen[tc.Name] = true
		if tc.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), tc.Replicas, "must be greater than or equal to 0"))
		}
	}
	return errs
}

func required(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return nil
}
