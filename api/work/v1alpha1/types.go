package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// ResourceBinding binds a namespaced template to a placement and holds the
// scheduling result and per-cluster statuses.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ResourceBindingSpec   `json:"spec"`
	Status ResourceBindingStatus `json:"status,omitzero"`
}

// ResourceBindingList is a list of ResourceBinding.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// ClusterResourceBinding is the binding of a cluster-scoped template (or of
// a template claimed by a ClusterPropagationPolicy).
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ResourceBindingSpec   `json:"spec"`
	Status ResourceBindingStatus `json:"status,omitzero"`
}

// ClusterResourceBindingList is a list of ClusterResourceBinding.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is the template, its needs, the placement, and the
// scheduling result.
type ResourceBindingSpec struct {
	// Resource is the template.
	Resource ObjectReference `json:"resource"`

	// PropagateDeps propagates the template's dependencies with it.
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// ReplicaRequirements is what one replica needs (from the interpreter).
	ReplicaRequirements *configv1alpha1.ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas is the template's replica count (from the interpreter).
	Replicas int32 `json:"replicas,omitempty"`

	// Components are the pod templates of a multi-template workload.
	Components []configv1alpha1.Component `json:"components,omitempty"`

	// Clusters is the scheduling result.
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// Placement is the claiming policy's placement.
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// GracefulEvictionTasks are clusters being left, kept until the
	// workload is healthy elsewhere or their grace period ends.
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// RequiredBy lists the bindings that depend on this one (for
	// dependencies propagated with propagateDeps).
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	SchedulerName      string                            `json:"schedulerName,omitempty"`
	Failover           *policyv1alpha1.FailoverBehavior  `json:"failover,omitempty"`
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// RescheduleTriggeredAt asks for a fresh reschedule when it is later
	// than status.lastScheduledTime.
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	Suspension                  *Suspension       `json:"suspension,omitempty"`
	PreserveResourcesOnDeletion *bool             `json:"preserveResourcesOnDeletion,omitempty"`
	SchedulePriority            *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ObjectReference identifies the template.
type ObjectReference struct {
	APIVersion      string    `json:"apiVersion"`
	Kind            string    `json:"kind"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name"`
	UID             types.UID `json:"uid,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
}

// TargetCluster is one cluster of the scheduling result.
type TargetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas,omitempty"`
}

// GracefulEvictionTask is a cluster the workload is leaving.
type GracefulEvictionTask struct {
	FromCluster string                   `json:"fromCluster"`
	PurgeMode   policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// Replicas the cluster had, when the workload has replicas.
	Replicas *int32 `json:"replicas,omitempty"`

	// Reason is a CamelCase reason, e.g. TaintUntolerated or
	// ApplicationFailure.
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`

	// Producer names the controller that created the task.
	Producer string `json:"producer"`

	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// SuppressDeletion true keeps the old copy; false removes it at once.
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	PreservedLabelState    map[string]string `json:"preservedLabelState,omitempty"`
	ClustersBeforeFailover []string          `json:"clustersBeforeFailover,omitempty"`

	// CreationTimestamp is set when the eviction controller first sees the
	// task.
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is a binding that requires this one, with its clusters.
type BindingSnapshot struct {
	Namespace string          `json:"namespace,omitempty"`
	Name      string          `json:"name"`
	Clusters  []TargetCluster `json:"clusters,omitempty"`
}

// Suspension is the policy's suspension plus scheduling suspension.
type Suspension struct {
	policyv1alpha1.Suspension `json:",inline"`

	// Scheduling true pauses scheduling of the binding.
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the resolved scheduling priority.
type SchedulePriority struct {
	// Priority is the PriorityClass value; higher is scheduled first.
	Priority int32 `json:"priority,omitempty"`
}

// ResourceBindingStatus is what the scheduler and the aggregator observed.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the generation last scheduled.
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// SchedulerObservedAffinityName is the clusterAffinities term in use.
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// LastScheduledTime is when the binding was last scheduled.
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AggregatedStatus is one item per target cluster.
	AggregatedStatus []configv1alpha1.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}
