package v1alpha1

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SetDefaults does nothing: a FederatedResourceQuota has no defaults.
func (q *FederatedResourceQuota) SetDefaults() {}

// Validate checks a FederatedResourceQuota by the rules of Karmada's
// webhook (a name of at most 63 characters; resource names and
// non-negative quantities; static assignments that name a cluster, stay
// within overall and use only its resources), plus one ResourceQuota per
// cluster (a clusterName assigned twice is a duplicate), then refuses
// what Tether does not honour: resource names that per-replica requests
// never count (requests.*, limits.*, count/*, object counts such as pods:
// Karmada accepts and never enforces them).
// A status is the hub's: the client API drops it from the input.
func (q *FederatedResourceQuota) Validate() field.ErrorList {
	errs := ValidateObjectMeta(&q.ObjectMeta, true)
	if len(q.Name) > validation.DNS1123LabelMaxLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), q.Name,
			fmt.Sprintf("must be no more than %d characters", validation.DNS1123LabelMaxLength)))
	}
	spec := field.NewPath("spec")
	if q.Spec.Overall == nil {
		errs = append(errs, field.Required(spec.Child("overall"), "the namespace's limit per resource, e.g. cpu: 4"))
	}
	errs = append(errs, validateQuotaResources(q.Spec.Overall, spec.Child("overall"))...)
	seen := map[string]bool{}
	for i, a := range q.Spec.StaticAssignments {
		p := spec.Child("staticAssignments").Index(i)
		errs = append(errs, validateStaticAssignment(&q.Spec, i, p)...)
		if seen[a.ClusterName] {
			errs = append(errs, field.Duplicate(p.Child("clusterName"), a.ClusterName))
		}
		seen[a.ClusterName] = true
	}
	for _, k := range slices.Sorted(maps.Keys(q.Spec.Overall)) {
		if v := q.Spec.Overall[k]; v.Cmp(assigned(q.Spec.StaticAssignments, k)) < 0 {
			errs = append(errs, field.Invalid(spec.Child("overall").Key(string(k)), v.String(), "overall is less than assignments"))
		}
	}
	return errs
}

// validateStaticAssignment checks one static assignment.
func validateStaticAssignment(s *FederatedResourceQuotaSpec, i int, p *field.Path) field.ErrorList {
	a := &s.StaticAssignments[i]
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(a.ClusterName) {
		errs = append(errs, field.Invalid(p.Child("clusterName"), a.ClusterName, msg))
	}
	errs = append(errs, validateQuotaResources(a.Hard, p.Child("hard"))...)
	for _, k := range slices.Sorted(maps.Keys(a.Hard)) {
		if _, ok := s.Overall[k]; !ok {
			errs = append(errs, field.Invalid(p.Child("hard").Key(string(k)), k, "assignment resourceName is not exist in overall"))
		}
	}
	return errs
}

// assigned is the sum of the static assignments of resource k.
func assigned(as []StaticClusterAssignment, k corev1.ResourceName) resource.Quantity {
	var sum resource.Quantity
	for _, a := range as {
		if q, ok := a.Hard[k]; ok {
			sum.Add(q)
		}
	}
	return sum
}

// objectCounts are ResourceQuota names that count objects, not requests.
var objectCounts = map[corev1.ResourceName]bool{
	corev1.ResourcePods: true, corev1.ResourceServices: true, corev1.ResourceReplicationControllers: true,
	corev1.ResourceQuotas: true, corev1.ResourceSecrets: true, corev1.ResourceConfigMaps: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceServicesNodePorts: true,
	corev1.ResourceServicesLoadBalancers: true,
}

// validateQuotaResources checks the names and quantities of a resource
// list: qualified names that per-replica requests count, quantities that
// are not negative.
func validateQuotaResources(rl corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(rl)) {
		kp := p.Key(string(k))
		for _, msg := range validation.IsQualifiedName(string(k)) {
			errs = append(errs, field.Invalid(kp, string(k), msg))
		}
		name := string(k)
		if strings.HasPrefix(name, "requests.") || strings.HasPrefix(name, "limits.") || strings.HasPrefix(name, "count/") || objectCounts[k] {
			errs = append(errs, field.NotSupported(kp, name, []string{"cpu", "memory", "ephemeral-storage", "an extended resource such as nvidia.com/gpu"}))
		}
		if v := rl[k]; v.Sign() < 0 {
			errs = append(errs, field.Invalid(kp, v.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}
