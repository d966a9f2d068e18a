package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// API group and version names. Tether's group is canonical; Karmada's
// work.karmada.io/v1alpha2 decodes into the same types (see api/codec).
const (
	// GroupName is Tether's work API group.
	GroupName = "work.tether.io"
	// Version is Tether's version of the work API.
	Version = "v1alpha1"
	// KarmadaGroupName is Karmada's work API group, accepted as an alias.
	KarmadaGroupName = "work.karmada.io"
	// KarmadaVersion is the Karmada version whose bindings these types
	// mirror.
	KarmadaVersion = "v1alpha2"
)

var (
	// GroupVersion is the canonical group version of this package's objects.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}
	// KarmadaGroupVersion is the Karmada group version that aliases GroupVersion.
	KarmadaGroupVersion = schema.GroupVersion{Group: KarmadaGroupName, Version: KarmadaVersion}
)

// Kinds of this package.
const (
	KindResourceBinding        = "ResourceBinding"
	KindClusterResourceBinding = "ClusterResourceBinding"
)
