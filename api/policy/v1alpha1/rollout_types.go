package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutPolicy paces how a change of the templates it selects (in its own
// namespace) reaches their clusters. It is Tether's own kind, served only in
// policy.tether.io; its vocabulary is Open Cluster Management's rollout
// strategy (ManifestWorkReplicaSet's rolloutStrategy). A template selected by
// no RolloutPolicy reaches every cluster at once, as in Karmada.
type RolloutPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired behavior of the policy.
	Spec RolloutSpec `json:"spec"`
}

// RolloutPolicyList is a list of RolloutPolicy.
type RolloutPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutPolicy `json:"items"`
}

// RolloutSpec is the desired behavior of a RolloutPolicy.
type RolloutSpec struct {
	// ResourceSelectors choose the templates, as a PropagationPolicy's do;
	// at least one is required.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Priority decides between several RolloutPolicies selecting one
	// template: the highest wins, then the first by name.
	Priority *int32 `json:"priority,omitempty"`

	// RolloutStrategy says how many clusters take a new version at once and
	// what each must show before the next starts.
	RolloutStrategy RolloutStrategy `json:"rolloutStrategy"`

	// Windows restrict when the clusters they select may start taking a new
	// version. A cluster selected by no window may start at any time.
	Windows []MaintenanceWindow `json:"windows,omitempty"`
}

// RolloutType is how a rollout proceeds.
type RolloutType string

// Rollout types (OCM's names).
const (
	// RolloutAll updates every cluster at once: today's behaviour, with the
	// rollout's progress recorded.
	RolloutAll RolloutType = "All"
	// RolloutProgressive updates at most maxConcurrency clusters at once,
	// the mandatory decision groups first.
	RolloutProgressive RolloutType = "Progressive"
	// RolloutProgressivePerGroup updates one group of clusters (one value
	// of the groupBy label) at a time, the mandatory groups first.
	RolloutProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// DefaultGroupLabel is the cluster label whose value is a cluster's rollout
// group when groupBy is not set.
const DefaultGroupLabel = "rollout.tether.io/group"

// RolloutStrategy is a rollout's type and its parameters.
type RolloutStrategy struct {
	// Type is All (the default), Progressive or ProgressivePerGroup.
	Type RolloutType `json:"type,omitempty"`

	// Progressive holds the parameters of type Progressive.
	Progressive *RolloutProgressiveParams `json:"progressive,omitempty"`

	// ProgressivePerGroup holds the parameters of type ProgressivePerGroup.
	ProgressivePerGroup *RolloutProgressivePerGroupParams `json:"progressivePerGroup,omitempty"`

	// GroupBy is the cluster label whose value is a cluster's group
	// (default rollout.tether.io/group). Clusters without the label form a
	// group of their own that goes last.
	GroupBy string `json:"groupBy,omitempty"`
}

// RolloutGates are the health gates every progressive type shares.
type RolloutGates struct {
	// MandatoryDecisionGroups go first, in the order given; every cluster
	// of them must succeed (maxFailures does not apply) before the others
	// start.
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`

	// MinSuccessTime is how long a cluster must stay Healthy at the new
	// version before it counts as succeeded (default 0).
	MinSuccessTime metav1.Duration `json:"minSuccessTime,omitempty"`

	// ProgressDeadline is how long a cluster has, from the moment it starts,
	// to succeed: a duration, or "None" for no deadline (the default, as in
	// OCM).
	ProgressDeadline string `json:"progressDeadline,omitempty"`

	// MaxFailures is how many failed clusters (or a percentage of the
	// clusters) the rollout tolerates before it pauses (default 0).
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`
}

// RolloutProgressiveParams are type Progressive's parameters.
type RolloutProgressiveParams struct {
	RolloutGates `json:",inline"`

	// MaxConcurrency is how many clusters (or a percentage of them, rounded
	// up, at least 1) may be taking the new version at once (default 1).
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`
}

// RolloutProgressivePerGroupParams are type ProgressivePerGroup's
// parameters.
type RolloutProgressivePerGroupParams struct {
	RolloutGates `json:",inline"`
}

// MandatoryDecisionGroup names a group of clusters that goes first.
type MandatoryDecisionGroup struct {
	// GroupName is a value of the groupBy cluster label.
	GroupName string `json:"groupName"`
}

// MaintenanceWindow lets the clusters it selects start taking a new
// version only within duration after each time of schedule.
type MaintenanceWindow struct {
	// ClusterSelector selects clusters by label; required.
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector"`

	// Schedule is a cron expression with five fields (minute hour
	// day-of-month month day-of-week), in UTC unless it starts with
	// CRON_TZ=<zone>.
	Schedule string `json:"schedule"`

	// Duration is how long the window stays open after each start.
	Duration metav1.Duration `json:"duration"`
}

// ProgressDeadlineNone is the progressDeadline that means no deadline.
const ProgressDeadlineNone = "None"
