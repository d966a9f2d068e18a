package v1alpha1

// ClusterValueSource takes an overrider's value from the cluster the object
// is rendered for, so that one rule gives each cluster its own value. It is
// a Tether extension of Karmada's overriders: an explicit field beside
// value, never a template inside it. Exactly one member is set.
//
// A source that a cluster cannot answer (a label or annotation it does not
// carry) fails that cluster's render, with the policy, rule, overrider and
// key in the error: the cluster keeps what it has and no empty value is
// ever sent.
type ClusterValueSource struct {
	// ClusterName is the cluster's name.
	ClusterName *ClusterNameSource `json:"clusterName,omitempty"`

	// ClusterLabel is the value of one of the cluster's labels.
	ClusterLabel *ClusterKeySource `json:"clusterLabel,omitempty"`

	// ClusterAnnotation is the value of one of the cluster's annotations.
	ClusterAnnotation *ClusterKeySource `json:"clusterAnnotation,omitempty"`
}

// ClusterNameSource selects the cluster's name; it has no fields.
type ClusterNameSource struct{}

// ClusterKeySource selects one label or annotation of the cluster.
type ClusterKeySource struct {
	// Key is the label or annotation key.
	Key string `json:"key"`
}
