package overrides

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Priority is how specifically a resource selector matches a resource
// (Karmada's ImplicitPriority). Higher is more specific.
type Priority int

// Priorities, in increasing specificity.
const (
	PriorityMismatch      Priority = iota // the selector does not match
	PriorityMatchAll                      // apiVersion/kind (and namespace) only
	PriorityLabelSelector                 // the labelSelector matches
	PriorityName                          // the name matches
)

// Cluster field keys a ClusterAffinity's fieldSelector may use.
const (
	FieldProvider = policyv1alpha1.ProviderField
	FieldRegion   = policyv1alpha1.RegionField
	FieldZone     = policyv1alpha1.ZoneField
)

// SelectorPriority tells how rs matches obj: apiVersion and kind must be
// equal (exact strings) and a non-empty namespace must be equal; then a
// non-empty name decides alone (labelSelector ignored); no name and no
// labelSelector match all; else the labelSelector decides, an invalid one
// never matching.
func SelectorPriority(obj *unstructured.Unstructured, rs policyv1alpha1.ResourceSelector) Priority {
	if obj.GetAPIVersion() != rs.APIVersion || obj.GetKind() != rs.Kind ||
		(rs.Namespace != "" && obj.GetNamespace() != rs.Namespace) {
		return PriorityMismatch
	}
	if rs.Name != "" {
		if rs.Name == obj.GetName() {
			return PriorityName
		}
		return PriorityMismatch
	}
	if rs.LabelSelector == nil {
		return PriorityMatchAll
	}
	s, err := metav1.LabelSelectorAsSelector(rs.LabelSelector)
	if err != nil || !s.Matches(labels.Set(obj.GetLabels())) {
		return PriorityMismatch
	}
	return PriorityLabelSelector
}

// MatchesResource tells whether any of selectors matches obj.
func MatchesResource(obj *unstructured.Unstructured, selectors ...policyv1alpha1.ResourceSelector) bool {
	return ResourcePriority(obj, selectors...) > PriorityMismatch
}

// ResourcePriority returns the highest priority of selectors for obj.
func ResourcePriority(obj *unstructured.Unstructured, selectors ...policyv1alpha1.ResourceSelector) Priority {
	best := PriorityMismatch
	for _, rs := range selectors {
		best = max(best, SelectorPriority(obj, rs))
	}
	return best
}

// MatchesCluster tells whether cluster satisfies affinity (Karmada's
// util.ClusterMatches): not excluded, the labelSelector (if set) matches its
// labels, the fieldSelector (if set) matches its provider/region/zones, and
// clusterNames is empty or lists it. It is the one implementation: the
// scheduler's cluster filter calls it too.
func MatchesCluster(cluster *clusterv1alpha1.Cluster, affinity policyv1alpha1.ClusterAffinity) bool {
	if slices.Contains(affinity.ExcludeClusters, cluster.Name) {
		return false
	}
	if affinity.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil || !s.Matches(labels.Set(cluster.Labels)) {
			return false
		}
	}
	if affinity.FieldSelector != nil && !matchesFields(cluster, affinity.FieldSelector.MatchExpressions) {
		return false
	}
	return len(affinity.ClusterNames) == 0 || slices.Contains(affinity.ClusterNames, cluster.Name)
}

// matchesFields matches a fieldSelector: "zone" against spec.zones, the
// other keys as a label set of the non-empty provider and region. An empty
// expression list matches nothing, as in Karmada.
func matchesFields(cluster *clusterv1alpha1.Cluster, exprs []corev1.NodeSelectorRequirement) bool {
	if len(exprs) == 0 {
		return false
	}
	var others []corev1.NodeSelectorRequirement
	for _, e := range exprs {
		if e.Key != FieldZone {
			others = append(others, e)
			continue
		}
		if !matchesZones(e, cluster.Spec.Zones) {
			return false
		}
	}
	if len(others) == 0 {
		return true
	}
	s, err := requirementsAsSelector(others)
	if err != nil {
		return false
	}
	fields := labels.Set{}
	if cluster.Spec.Provider != "" {
		fields[FieldProvider] = cluster.Spec.Provider
	}
	if cluster.Spec.Region != "" {
		fields[FieldRegion] = cluster.Spec.Region
	}
	return s.Matches(fields)
}

// matchesZones matches one "zone" expression against a cluster's zones:
// In needs an overlap, NotIn no overlap, Exists some zone, DoesNotExist none.
func matchesZones(e corev1.NodeSelectorRequirement, zones []string) bool {
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

// nodeSelectorOps maps node selector operators to label selector ones.
var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// requirementsAsSelector is Kubernetes' nodeSelectorRequirementsAsSelector.
func requirementsAsSelector(exprs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	s := labels.NewSelector()
	for _, e := range exprs {
		op, ok := nodeSelectorOps[e.Operator]
		if !ok {
			return nil, fmt.Errorf("%q is not a valid node selector operator", e.Operator)
		}
		r, err := labels.NewRequirement(e.Key, op, e.Values)
		if err != nil {
			return nil, err
		}
		s = s.Add(*r)
	}
	return s, nil
}
