package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy propagates the templates of its own namespace to member
// clusters.
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behavior of the policy.
	Spec PropagationSpec `json:"spec"`
}

// PropagationPolicyList is a list of PropagationPolicy.
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PropagationPolicy `json:"items"`
}

// ClusterPropagationPolicy is the cluster-scoped PropagationPolicy: it can
// select cluster-scoped templates and namespaced templates of any namespace.
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behavior of the policy.
	Spec PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicy.
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagationPolicy `json:"items"`
}

// PropagationSpec is the desired behavior of a (Cluster)PropagationPolicy.
type PropagationSpec struct {
	// ResourceSelectors select the templates; at least one is required (an
	// empty list does not mean "everything").
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Association is the deprecated spelling of PropagateDeps.
	Association bool `json:"association,omitempty"`

	// PropagateDeps propagates the objects a template depends on (ConfigMaps,
	// Secrets, ...) along with it.
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// Placement selects clusters and divides replicas. It is always encoded,
	// as Karmada does.
	Placement Placement `json:"placement,omitempty"`

	// Priority decides between policies matching one template; higher wins.
	// Defaults to 0.
	Priority *int32 `json:"priority,omitempty"`

	// Preemption lets this policy take templates from policies of lower
	// priority: Always or Never (default).
	Preemption PreemptionPolicy `json:"preemption,omitempty"`

	// DependentOverrides names the OverridePolicies that must exist before
	// this policy takes effect.
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// SchedulerName names the scheduler; defaults to "default-scheduler".
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover configures migration on application or cluster failure; nil
	// disables it.
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution says what to do when a propagated object already
	// exists in a member cluster: Abort (default) or Overwrite.
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// ActivationPreference "Lazy" defers policy changes until the template
	// itself changes; empty applies them at once.
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// Suspension pauses dispatching to all or some clusters.
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps the member objects when the template
	// is deleted.
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority gives the bindings of this policy a scheduling
	// priority from a PriorityClass.
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector selects templates by apiVersion and kind, and optionally
// by namespace, name or labels.
type ResourceSelector struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	// Namespace defaults to the policy's namespace for namespaced policies.
	Namespace string `json:"namespace,omitempty"`

	// Name selects one object; empty selects all.
	Name string `json:"name,omitempty"`

	// LabelSelector is ignored when Name is set.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldSelector filters clusters by the fields provider, region and zone.
type FieldSelector struct {
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Placement is the rule for selecting clusters.
type Placement struct {
	// ClusterAffinity restricts the candidate clusters. It cannot be set
	// together with ClusterAffinities.
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities are ordered groups of clusters; the scheduler uses the
	// first group that can take the workload.
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// ClusterTolerations tolerate cluster taints.
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints spread the workload over groups of clusters.
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling divides replicas; nil means Duplicated.
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity co-locates or separates workloads by a label (alpha).
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// ClusterAffinity is a filter over clusters. All set parts must match.
type ClusterAffinity struct {
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// FieldSelector matches the cluster fields provider, region and zone
	// with the operators In and NotIn.
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	ClusterNames []string `json:"clusterNames,omitempty"`

	// ExcludeClusters are never selected.
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is one named group of clusters of
// Placement.ClusterAffinities.
type ClusterAffinityTerm struct {
	// AffinityName names the group: 1 to 32 characters, label-key syntax,
	// unique within the placement.
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// OverflowAffinities are further groups the scheduler adds in order when
	// the primary group lacks capacity (dynamic-weight or aggregated division
	// only).
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinity is one overflow group of a ClusterAffinityTerm.
type OverflowClusterAffinity struct {
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}

// SpreadFieldValue is a cluster field to spread by.
type SpreadFieldValue string

// Fields to spread by.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint spreads a workload over groups of clusters.
type SpreadConstraint struct {
	// SpreadByField groups clusters by a field; it excludes SpreadByLabel.
	// Defaults to "cluster" when both are empty.
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// SpreadByLabel groups clusters by the value of a label.
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// MaxGroups is the maximum number of groups selected; not defaulted.
	MaxGroups int `json:"maxGroups,omitempty"`

	// MinGroups is the minimum number of groups selected; defaults to 1.
	MinGroups int `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType is how replicas are scheduled.
type ReplicaSchedulingType string

// Replica scheduling types.
const (
	// ReplicaSchedulingTypeDuplicated gives every cluster all replicas.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided divides the replicas among clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference is how Divided replicas are divided.
type ReplicaDivisionPreference string

// Division preferences.
const (
	// ReplicaDivisionPreferenceAggregated uses as few clusters as possible.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	// ReplicaDivisionPreferenceWeighted divides by WeightPreference.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy is the assignment strategy of replicas.
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated or Divided (default).
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// ReplicaDivisionPreference is Aggregated or Weighted (default for
	// Divided).
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// WeightPreference gives weights; nil weights all clusters equally.
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ClusterPreferences gives the weights of clusters.
type ClusterPreferences struct {
	// StaticWeightList gives fixed weights.
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// DynamicWeight derives weights from capacity; it overrides
	// StaticWeightList.
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the weight of the clusters TargetCluster matches.
type StaticClusterWeight struct {
	TargetCluster ClusterAffinity `json:"targetCluster"`

	// Weight is at least 1.
	Weight int64 `json:"weight"`
}

// DynamicWeightFactor is what dynamic weights are derived from.
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weights clusters by how many replicas of
// the workload they can still take.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// WorkloadAffinity co-locates (Affinity) or separates (AntiAffinity)
// workloads that share the value of a template label.
type WorkloadAffinity struct {
	Affinity     *WorkloadAffinityTerm     `json:"affinity,omitempty"`
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm groups workloads by the value of a template label.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is a label key of the template.
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm groups workloads to keep apart by the value of a
// template label.
type WorkloadAntiAffinityTerm struct {
	// GroupByLabelKey is a label key of the template.
	GroupByLabelKey string `json:"groupByLabelKey"`
}
