package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedResourceQuota limits what the templates of its namespace may
// request across the whole fleet (Karmada's FederatedResourceQuota):
// spec.overall bounds, per resource, the sum over every binding of the
// namespace of its replicas in each target cluster times its per-replica
// requests, checked when a template or a placement is applied;
// spec.staticAssignments gives each named cluster a ResourceQuota named
// like the quota, in its namespace (Karmada's
// federated-resource-quota-sync).
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the quota.
	Spec FederatedResourceQuotaSpec `json:"spec"`

	// Status is the usage the hub observed, computed when the quota is
	// read; an applied one is dropped, as every status is.
	Status FederatedResourceQuotaStatus `json:"status,omitzero"`
}

// FederatedResourceQuotaSpec is the desired quota.
type FederatedResourceQuotaSpec struct {
	// Overall is the namespace's limit across every cluster, per resource.
	Overall corev1.ResourceList `json:"overall"`

	// StaticAssignments are ResourceQuotas for named clusters: each named
	// cluster gets one with spec.hard = Hard, removed when the cluster
	// leaves the list or the quota is deleted.
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the ResourceQuota one cluster gets.
type StaticClusterAssignment struct {
	// ClusterName names the cluster.
	ClusterName string `json:"clusterName"`

	// Hard is the cluster's ResourceQuota spec.hard.
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is the observed usage.
type FederatedResourceQuotaStatus struct {
	// Overall is spec.overall as last enforced.
	Overall corev1.ResourceList `json:"overall,omitempty"`

	// OverallUsed is the namespace's usage across every cluster.
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`

	// AggregatedStatus is the usage per cluster.
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is one cluster's quota usage: Hard is the cluster's
// static assignment (spec.overall for a cluster without one), Used what
// the namespace's bindings place there, as the hub computes it (not the
// member ResourceQuota's own status).
type ClusterQuotaStatus struct {
	// ClusterName names the cluster.
	ClusterName string `json:"clusterName"`

	corev1.ResourceQuotaStatus `json:",inline"`
}

// FederatedResourceQuotaList is a list of FederatedResourceQuota.
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedResourceQuota `json:"items"`
}
