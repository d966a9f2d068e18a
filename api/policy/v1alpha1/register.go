package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// API group and version names. Tether's group is canonical; Karmada's group
// decodes into the same types (see api/codec).
const (
	// GroupName is Tether's policy API group.
	GroupName = "policy.tether.io"
	// KarmadaGroupName is Karmada's policy API group, accepted as an alias.
	KarmadaGroupName = "policy.karmada.io"
	// Version is the API version, the same in both groups.
	Version = "v1alpha1"
)

var (
	// GroupVersion is the canonical group version of this package's objects.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}
	// KarmadaGroupVersion is the Karmada group version that aliases GroupVersion.
	KarmadaGroupVersion = schema.GroupVersion{Group: KarmadaGroupName, Version: Version}
)

// Kinds of this package.
const (
	KindPropagationPolicy        = "PropagationPolicy"
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
	KindOverridePolicy           = "OverridePolicy"
	KindClusterOverridePolicy    = "ClusterOverridePolicy"
	KindFederatedResourceQuota   = "FederatedResourceQuota"
	// KindRolloutPolicy is Tether's own: not served in Karmada's group.
	KindRolloutPolicy = "RolloutPolicy"
)
