package v1alpha1

// PreemptionPolicy says whether a policy may take templates from policies of
// lower priority.
type PreemptionPolicy string

// Preemption policies.
const (
	PreemptAlways PreemptionPolicy = "Always"
	PreemptNever  PreemptionPolicy = "Never"
)

// ConflictResolution says what to do when an object already exists in a
// member cluster.
type ConflictResolution string

// Conflict resolutions.
const (
	// ConflictOverwrite takes the existing object over.
	ConflictOverwrite ConflictResolution = "Overwrite"
	// ConflictAbort leaves the existing object alone and reports the
	// conflict.
	ConflictAbort ConflictResolution = "Abort"
)

// ActivationPreference says when policy changes reach the templates.
type ActivationPreference string

// LazyActivation applies a policy change to a template only when the
// template changes.
const LazyActivation ActivationPreference = "Lazy"

// DefaultSchedulerName is the scheduler used when SchedulerName is empty.
const DefaultSchedulerName = "default-scheduler"

// FailoverBehavior says how workloads move on application or cluster
// failure.
type FailoverBehavior struct {
	// Application triggers migration when the application is unhealthy; it
	// requires PropagateDeps.
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// Cluster sets how workloads leave a failed cluster.
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior is the application failover configuration.
type ApplicationFailoverBehavior struct {
	// DecisionConditions says when to fail over.
	DecisionConditions DecisionConditions `json:"decisionConditions"`

	// PurgeMode is how the application is removed from the cluster it
	// leaves: Directly, Gracefully (default) or Never; Immediately and
	// Graciously are deprecated spellings of Directly and Gracefully.
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// GracePeriodSeconds bounds how long the old application is kept with
	// PurgeMode Gracefully; defaults to 600.
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// StatePreservation carries state from the old cluster to the new one.
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions are the conditions of an application failover.
type DecisionConditions struct {
	// TolerationSeconds is how long the application must stay unhealthy;
	// defaults to 300.
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// ClusterFailoverBehavior is the cluster failover configuration.
type ClusterFailoverBehavior struct {
	// PurgeMode is Directly or Gracefully (default).
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// StatePreservation carries state from the old cluster to the new one.
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// PurgeMode is how an application is removed from the cluster it leaves.
type PurgeMode string

// Purge modes.
const (
	// PurgeModeDirectly removes it at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully removes it once the new one is healthy or the grace
	// period ends.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever keeps it.
	PurgeModeNever PurgeMode = "Never"
	// PurgeModeImmediately is the deprecated spelling of PurgeModeDirectly.
	PurgeModeImmediately PurgeMode = "Immediately"
	// PurgeModeGraciously is the deprecated spelling of PurgeModeGracefully.
	PurgeModeGraciously PurgeMode = "Graciously"
)

// IsGraceful reports whether m is Gracefully or its deprecated spelling.
func (m PurgeMode) IsGraceful() bool {
	return m == PurgeModeGracefully || m == PurgeModeGraciously
}

// IsDirect reports whether m is Directly or its deprecated spelling.
func (m PurgeMode) IsDirect() bool {
	return m == PurgeModeDirectly || m == PurgeModeImmediately
}

// StatePreservation lists the state to carry over on failover.
type StatePreservation struct {
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule copies the value at JSONPath (relative to .status)
// into the label AliasLabelName of the migrated workload.
type StatePreservationRule struct {
	AliasLabelName string `json:"aliasLabelName"`
	JSONPath       string `json:"jsonPath"`
}

// Suspension pauses dispatching.
type Suspension struct {
	// Dispatching true stops dispatching to all clusters. It cannot be set
	// together with DispatchingOnClusters.
	Dispatching *bool `json:"dispatching,omitempty"`

	// DispatchingOnClusters stops dispatching to the listed clusters.
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists clusters.
type SuspendClusters struct {
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// PriorityClassSource is where a scheduling priority comes from.
type PriorityClassSource string

// Priority class sources. Only KubePriorityClass is accepted.
const (
	// KubePriorityClass uses a scheduling.k8s.io/v1 PriorityClass.
	KubePriorityClass PriorityClassSource = "KubePriorityClass"
	// PodPriorityClass uses the pod template's priorityClassName (not
	// implemented by Karmada).
	PodPriorityClass PriorityClassSource = "PodPriorityClass"
	// FederatedPriorityClass uses a federated PriorityClass (not
	// implemented by Karmada).
	FederatedPriorityClass PriorityClassSource = "FederatedPriorityClass"
)

// SchedulePriority names the PriorityClass of a policy's bindings.
type SchedulePriority struct {
	PriorityClassSource PriorityClassSource `json:"priorityClassSource,omitempty"`
	PriorityClassName   string              `json:"priorityClassName"`
}
