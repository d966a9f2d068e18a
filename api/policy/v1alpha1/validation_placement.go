package v1alpha1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of the placement API.
const (
	// MaxAffinityNameLength is the maximum length of an affinityName.
	MaxAffinityNameLength = 32
)

// Cluster fields a fieldSelector may use.
const (
	ProviderField = "provider"
	RegionField   = "region"
	ZoneField     = "zone"
)

// ValidatePlacement checks a placement: clusterAffinity and
// clusterAffinities exclude each other, affinities, tolerations, spread
// constraints, replica scheduling and workload affinity are well formed, and
// overflow affinities are used only with dynamic-weight or aggregated
// division.
func ValidatePlacement(p *Placement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.ClusterAffinity != nil && len(p.ClusterAffinities) > 0 {
		errs = append(errs, field.Forbidden(path.Child("clusterAffinities"),
			"clusterAffinities cannot co-exist with clusterAffinity"))
	}
	if p.ClusterAffinity != nil {
		errs = append(errs, ValidateClusterAffinity(p.ClusterAffinity, path.Child("clusterAffinity"))...)
	}
	errs = append(errs, validateClusterAffinities(p.ClusterAffinities, path.Child("clusterAffinities"))...)
	errs = append(errs, validateOverflowUse(p, path.Child("clusterAffinities"))...)
	errs = append(errs, validateClusterTolerations(p.ClusterTolerations, path.Child("clusterTolerations"))...)
	errs = append(errs, validateSpreadConstraints(p.SpreadConstraints, path.Child("spreadConstraints"))...)
	errs = append(errs, validateReplicaScheduling(p.ReplicaScheduling, path.Child("replicaScheduling"))...)
	errs = append(errs, validateWorkloadAffinity(p.WorkloadAffinity, path.Child("workloadAffinity"))...)
	return errs
}

// ValidateClusterAffinity checks a cluster filter: a well-formed label
// selector and a field selector on provider, region or zone with In or
// NotIn.
func ValidateClusterAffinity(a *ClusterAffinity, path *field.Path) field.ErrorList {
	errs := validateLabelSelector(a.LabelSelector, path.Child("labelSelector"))
	if a.FieldSelector == nil {
		return errs
	}
	mpath := path.Child("fieldSelector", "matchExpressions")
	for i, req := range a.FieldSelector.MatchExpressions {
		p := mpath.Index(i)
		switch req.Key {
		case ProviderField, RegionField, ZoneField:
		default:
			errs = append(errs, field.Invalid(p.Child("key"), req.Key,
				fmt.Sprintf("unsupported key %q, must be provider, region, or zone", req.Key)))
		}
		switch req.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator,
				fmt.Sprintf("unsupported operator %q, must be In or NotIn", req.Operator)))
		}
	}
	return errs
}

func validateClusterAffinities(terms []ClusterAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(terms))
	for i := range terms {
		term, p := &terms[i], path.Index(i)
		errs = append(errs, validateAffinityName(term.AffinityName, p.Child("affinityName"))...)
		if seen[term.AffinityName] {
			errs = append(errs, field.Invalid(p.Child("affinityName"), term.AffinityName,
				"each affinity term in a policy must have a unique name"))
		}
		seen[term.AffinityName] = true
		errs = append(errs, ValidateClusterAffinity(&term.ClusterAffinity, p)...)
		errs = append(errs, validateOverflowAffinities(term, p)...)
	}
	return errs
}

func validateAffinityName(name string, path *field.Path) field.ErrorList {
	errs := qualifiedName(path, name)
	if len(name) > MaxAffinityNameLength {
		errs = append(errs, field.TooLong(path, name, MaxAffinityNameLength))
	}
	return errs
}

func validateOverflowAffinities(term *ClusterAffinityTerm, path *field.Path) field.ErrorList {
	if len(term.OverflowAffinities) == 0 {
		return nil
	}
	opath := path.Child("overflowAffinities")
	var errs field.ErrorList
	if term.ClusterAffinity.IsEmpty() {
		errs = append(errs, field.Invalid(opath, len(term.OverflowAffinities),
			"overflowAffinities can only be used together with the inline ClusterAffinity"))
	}
	seen := map[string]bool{term.AffinityName: true}
	for i := range term.OverflowAffinities {
		o, p := &term.OverflowAffinities[i], opath.Index(i)
		npath := p.Child("affinityName")
		if o.AffinityName == "" {
			errs = append(errs, field.Required(npath, ""))
		} else if len(o.AffinityName) > MaxAffinityNameLength {
			errs = append(errs, field.TooLong(npath, o.AffinityName, MaxAffinityNameLength))
		}
		if seen[o.AffinityName] {
			errs = append(errs, field.Invalid(npath, o.AffinityName,
				"overflow affinity name must be unique and must not duplicate the primary group's affinityName"))
		}
		seen[o.AffinityName] = true
		errs = append(errs, ValidateClusterAffinity(&o.ClusterAffinity, p)...)
	}
	return errs
}

// validateOverflowUse reports overflow affinities with a division that is
// neither Aggregated nor Weighted by a dynamic weight (once, for the first
// term that has them).
func validateOverflowUse(p *Placement, path *field.Path) field.ErrorList {
	if p.ReplicaDivisionPreference() == ReplicaDivisionPreferenceAggregated || p.IsDynamicWeighted() {
		return nil
	}
	for i := range p.ClusterAffinities {
		if len(p.ClusterAffinities[i].OverflowAffinities) > 0 {
			return field.ErrorList{field.Invalid(path.Index(i).Child("overflowAffinities"),
				len(p.ClusterAffinities[i].OverflowAffinities),
				"overflowAffinities can only be used together with dynamic weight or aggregated scheduling")}
		}
	}
	return nil
}

// validateClusterTolerations accepts the operators Equal and Exists (not the
// numeric Lt and Gt of newer Kubernetes versions) and the known effects.
func validateClusterTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := path.Index(i)
		errs = append(errs, enum(p.Child("operator"), t.Operator, corev1.TolerationOpEqual, corev1.TolerationOpExists)...)
		errs = append(errs, enum(p.Child("effect"), t.Effect, corev1.TaintEffectNoSchedule,
			corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
	}
	return errs
}

func validateSpreadConstraints(constraints []SpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	fields := make(map[SpreadFieldValue]bool)
	for i, sc := range constraints {
		p := path.Index(i)
		errs = append(errs, validateSpreadConstraint(sc, p)...)
		by := sc.SpreadByField
		if by == "" && sc.SpreadByLabel == "" {
			by = SpreadByFieldCluster // the default, so that defaulting changes nothing here
		}
		if by == "" {
			continue
		}
		if fields[by] {
			errs = append(errs, field.Invalid(p.Child("spreadByField"), by,
				fmt.Sprintf("multiple %s spread constraints are not allowed", by)))
		}
		fields[by] = true
	}
	if len(fields) > 0 && !fields[SpreadByFieldCluster] {
		errs = append(errs, field.Invalid(path, len(constraints),
			"the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"))
	}
	return errs
}

func validateSpreadConstraint(sc SpreadConstraint, p *field.Path) field.ErrorList {
	errs := enum(p.Child("spreadByField"), sc.SpreadByField,
		SpreadByFieldCluster, SpreadByFieldRegion, SpreadByFieldZone, SpreadByFieldProvider)
	if sc.SpreadByField != "" && sc.SpreadByLabel != "" {
		errs = append(errs, field.Invalid(p.Child("spreadByLabel"), sc.SpreadByLabel,
			"spreadByLabel should not co-exist with spreadByField"))
	}
	if sc.MaxGroups < 0 {
		errs = append(errs, field.Invalid(p.Child("maxGroups"), sc.MaxGroups, "maxGroups lower than 0 is not allowed"))
	}
	if sc.MinGroups < 0 {
		errs = append(errs, field.Invalid(p.Child("minGroups"), sc.MinGroups, "minGroups lower than 0 is not allowed"))
	}
	if sc.MaxGroups > 0 && sc.MaxGroups < sc.MinGroups {
		errs = append(errs, field.Invalid(p.Child("maxGroups"), sc.MaxGroups,
			"maxGroups lower than minGroups is not allowed"))
	}
	return errs
}

func validateReplicaScheduling(rs *ReplicaSchedulingStrategy, path *field.Path) field.ErrorList {
	if rs == nil {
		return nil
	}
	errs := enum(path.Child("replicaSchedulingType"), rs.ReplicaSchedulingType,
		ReplicaSchedulingTypeDuplicated, ReplicaSchedulingTypeDivided)
	errs = append(errs, enum(path.Child("replicaDivisionPreference"), rs.ReplicaDivisionPreference,
		ReplicaDivisionPreferenceAggregated, ReplicaDivisionPreferenceWeighted)...)
	if rs.WeightPreference == nil {
		return errs
	}
	wpath := path.Child("weightPreference")
	errs = append(errs, enum(wpath.Child("dynamicWeight"), rs.WeightPreference.DynamicWeight,
		DynamicWeightByAvailableReplicas)...)
	for i := range rs.WeightPreference.StaticWeightList {
		w, p := &rs.WeightPreference.StaticWeightList[i], wpath.Child("staticWeightList").Index(i)
		errs = append(errs, ValidateClusterAffinity(&w.TargetCluster, p.Child("targetCluster"))...)
		if w.Weight < 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), w.Weight, "must be greater than or equal to 1"))
		}
	}
	return errs
}

func validateWorkloadAffinity(wa *WorkloadAffinity, path *field.Path) field.ErrorList {
	if wa == nil {
		return nil
	}
	var errs field.ErrorList
	if wa.Affinity != nil {
		errs = append(errs, qualifiedName(path.Child("affinity", "groupByLabelKey"), wa.Affinity.GroupByLabelKey)...)
	}
	if wa.AntiAffinity != nil {
		errs = append(errs, qualifiedName(path.Child("antiAffinity", "groupByLabelKey"), wa.AntiAffinity.GroupByLabelKey)...)
	}
	if wa.Affinity != nil && wa.AntiAffinity != nil && wa.Affinity.GroupByLabelKey == wa.AntiAffinity.GroupByLabelKey {
		errs = append(errs, field.Invalid(path.Child("antiAffinity", "groupByLabelKey"), wa.AntiAffinity.GroupByLabelKey,
			"affinity and antiAffinity must not use the same groupByLabelKey"))
	}
	return errs
}
