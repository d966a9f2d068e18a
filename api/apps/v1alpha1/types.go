package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WorkloadRebalancer asks the hub to schedule its workloads afresh once
// (Karmada's WorkloadRebalancer). Cluster-scoped.
type WorkloadRebalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WorkloadRebalancerSpec   `json:"spec"`
	Status WorkloadRebalancerStatus `json:"status,omitempty"`
}

// WorkloadRebalancerSpec names the workloads to reschedule.
type WorkloadRebalancerSpec struct {
	// Workloads are the resource templates whose bindings are rescheduled;
	// at least one.
	Workloads []ObjectReference `json:"workloads"`
	// TTLSecondsAfterFinished, when set, deletes the rebalancer this many
	// seconds after status.finishTime; unset, it stays until deleted.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ObjectReference names a resource template.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Namespace is empty for a cluster-scoped template.
	Namespace string `json:"namespace,omitempty"`
}

// WorkloadRebalancerStatus is what the hub did.
type WorkloadRebalancerStatus struct {
	// ObservedWorkloads is the result per workload, sorted by apiVersion,
	// kind, namespace and name.
	ObservedWorkloads []ObservedWorkload `json:"observedWorkloads,omitempty"`
	// ObservedGeneration is the generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// FinishTime is when every workload got a result; the TTL counts from
	// it.
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// ObservedWorkload is one workload's result.
type ObservedWorkload struct {
	Workload ObjectReference `json:"workload"`
	// Result is empty while the workload is pending.
	Result RebalanceResult `json:"result,omitempty"`
	// Reason says why a workload Failed.
	Reason RebalanceFailedReason `json:"reason,omitempty"`
}

// RebalanceResult is a workload's outcome.
type RebalanceResult string

// Results.
const (
	// RebalanceFailed: the workload was not rescheduled (see Reason).
	RebalanceFailed RebalanceResult = "Failed"
	// RebalanceSuccessful: the workload's binding was asked to reschedule.
	RebalanceSuccessful RebalanceResult = "Successful"
)

// RebalanceFailedReason is why a workload Failed.
type RebalanceFailedReason string

// Reasons.
const (
	// RebalanceObjectNotFound: the workload has no binding (no template, or
	// no policy claims it).
	RebalanceObjectNotFound RebalanceFailedReason = "ReferencedBindingNotFound"
)
