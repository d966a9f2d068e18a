// Package v1alpha1 holds the apps.tether.io/v1alpha1 WorkloadRebalancer:
// a one-shot request to schedule the named workloads afresh, so that
// replicas that failed over return to the clusters their policy prefers.
//
// The shapes are Karmada's apps.karmada.io/v1alpha1 WorkloadRebalancer
// (which api/codec accepts as an alias): spec.workloads (apiVersion, kind,
// namespace, name), spec.ttlSecondsAfterFinished, and the status the hub
// writes: observedWorkloads (each Successful, or Failed with reason
// ReferencedBindingNotFound), observedGeneration and finishTime. The kind
// is cluster-scoped, as in Karmada. SyncObserved is the status
// bookkeeping of Karmada's controller (which workloads a spec change keeps,
// adds or forgets), pure, so that the hub's loop (hub/rebalancer) stays
// thin.
//
// It imports only Kubernetes API packages.
package v1alpha1
