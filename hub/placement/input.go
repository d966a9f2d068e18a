package placement

import (
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Input is everything one scheduling decision depends on. Schedule reads
// it and never modifies it.
type Input struct {
	// Placement is the policy's placement with API defaults already
	// applied (SetDefaults): the scheduler does not default anything.
	Placement policyv1alpha1.Placement
	// Clusters is the snapshot of every registered cluster, deleting ones
	// included (they are skipped, but counted in a FitError's total).
	Clusters []Cluster
	// Workload is the resource template being placed.
	Workload Workload
	// Previous is the binding's current state: its last result and what
	// happened to it since.
	Previous Previous
	// EnableEmptyWorkloadPropagation keeps selected clusters that got 0
	// replicas in the result (Karmada's --enable-empty-workload-propagation).
	EnableEmptyWorkloadPropagation bool
}

// Cluster is what the scheduler knows about one member cluster.
type Cluster struct {
	Name   string
	Labels map[string]string
	Taints []corev1.Taint
	// Provider, Region, Zone and Zones are the cluster's topology
	// properties (Karmada's spec.provider/region/zone/zones).
	Provider string
	Region   string
	Zone     string
	Zones    []string
	// AvailableReplicas, when set, is an external estimate of how many
	// more replicas of this workload the cluster can take (for example
	// from an accurate estimator). With ResourceSummary also set, the
	// smaller of the two estimates wins, as with Karmada's estimators.
	AvailableReplicas *int32
	// ResourceSummary is the capacity the cluster's agent last reported;
	// nil means the cluster can take no replica that needs estimating.
	ResourceSummary *clusterv1alpha1.ResourceSummary
	// ResourceModels are the cluster's node grades, used with
	// ResourceSummary.AllocatableModelings.
	ResourceModels []clusterv1alpha1.ResourceModel
	// APIEnabled reports that the cluster serves the workload's kind.
	// False also when it is unknown (the API list is incomplete).
	APIEnabled bool
	// Deleting marks a cluster being removed: it is never a candidate.
	Deleting bool
	// WorksFull marks a cluster that holds as many works as its hub serves
	// to one cluster: it is a candidate only for a workload it already
	// runs (a Tether filter; Karmada has no such limit).
	WorksFull bool
}

// Workload identifies the template being scheduled and its size.
type Workload struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// UID is the template's UID: Webster tie-breaks depend on it.
	UID      string
	Replicas int32
	// Requirements is what one replica needs; nil when the template has
	// no requests, node selector, tolerations or required node affinity.
	// A non-nil value makes a 0-replica workload a workload (see README).
	Requirements *configv1alpha1.ReplicaRequirements
	// Components is the number of pod templates of a multi-template
	// workload; more than one makes it a non-workload for assignment.
	Components int
}

// Previous is the binding's state before this decision.
type Previous struct {
	// Clusters is the last result (binding spec.clusters).
	Clusters []TargetCluster
	// ObservedAffinityName is the clusterAffinities term in use.
	ObservedAffinityName string
	// EvictingClusters are the fromCluster of every graceful eviction task.
	EvictingClusters []string
	// RescheduleTriggered asks for a fresh division that ignores the
	// previous result (rescheduleTriggeredAt > lastScheduledTime).
	RescheduleTriggered bool
}

// TargetCluster is one cluster of a result with its replicas.
type TargetCluster struct {
	Name     string
	Replicas int32
}

// Result is a successful placement.
type Result struct {
	// Clusters are the targets, in candidate order; compare as a set.
	Clusters []TargetCluster
	// ObservedAffinityName is the clusterAffinities term that produced
	// Clusters ("" without clusterAffinities); persist it.
	ObservedAffinityName string
	// Rejected lists the clusters the filters turned down, with every
	// reason, for "why not" queries.
	Rejected []Rejection
}

// Rejection says why one cluster could not be a candidate. Schedule
// returns it in Result.Rejected and FitError.Rejected; the scheduling loop
// records the same list on the binding (AnnotationRejections) for the
// placement "why not" query.
type Rejection struct {
	Cluster string `json:"cluster"`
	// Reasons are the failing filters' messages, in filter order.
	Reasons []string `json:"reasons"`
}
