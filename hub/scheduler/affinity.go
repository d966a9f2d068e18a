package scheduler

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Field selector keys (Karmada's util.ProviderField/RegionField/ZoneField).
const (
	fieldProvider = "provider"
	fieldRegion   = "region"
	fieldZone     = "zone"
)

// clusterMatches is Karmada's util.ClusterMatches: not excluded, labels
// match, fields match and, when clusterNames is set, listed by name.
func clusterMatches(c *Cluster, a *policyv1alpha1.ClusterAffinity) bool {
	if slices.Contains(a.ExcludeClusters, c.Name) {
		return false
	}
	if a.LabelSelector != nil && !labelsMatch(a.LabelSelector, c.Labels) {
		return false
	}
	if a.FieldSelector != nil && !fieldsMatch(a.FieldSelector.MatchExpressions, c) {
		return false
	}
	return len(a.ClusterNames) == 0 || slices.Contains(a.ClusterNames, c.Name)
}

// labelsMatch treats an invalid selector as matching nothing.
func labelsMatch(sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(set))
}

// fieldsMatch ANDs the expressions. provider and region are matched as
// labels built from the non-empty properties, so "region NotIn [x]"
// matches a cluster without a region; zone is matched against Zones.
func fieldsMatch(exprs []corev1.NodeSelectorRequirement, c *Cluster) bool {
	fields := map[string]string{}
	if c.Provider != "" {
		fields[fieldProvider] = c.Provider
	}
	if c.Region != "" {
		fields[fieldRegion] = c.Region
	}
	for _, e := range exprs {
		var ok bool
		if e.Key == fieldZone {
			ok = zonesMatch(e, zonesOf(c))
		} else {
			ok = fieldMatches(e, fields)
		}
		if !ok {
			return false
		}
	}
	return true
}

// fieldMatches is node-selector semantics over a label set; the API only
// admits In and NotIn, other operators match nothing.
func fieldMatches(e corev1.NodeSelectorRequirement, fields map[string]string) bool {
	v, has := fields[e.Key]
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	}
	return false
}

// zonesMatch: In needs an overlap (no zones never match), NotIn needs
// none of the listed zones.
func zonesMatch(e corev1.NodeSelectorRequirement, zones []string) bool {
	overlap := slices.ContainsFunc(zones, func(z string) bool { return slices.Contains(e.Values, z) })
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return overlap
	case corev1.NodeSelectorOpNotIn:
		return !overlap
	case corev1.NodeSelectorOpExists:
		return len(zones) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(zones) == 0
	}
	return false
}
