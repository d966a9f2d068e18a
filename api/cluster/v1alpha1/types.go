package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a member cluster. It is cluster-scoped; its name is the
// identity in the agent's client certificate.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what placement selects on.
	Spec ClusterSpec `json:"spec"`

	// Status is what the agent last reported.
	Status ClusterStatus `json:"status,omitzero"`
}

// ClusterList is a list of Cluster.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClusterSpec is what placement selects on.
type ClusterSpec struct {
	// ID is a unique identifier of the cluster, such as the UID of its
	// kube-system namespace, reported by the agent.
	ID string `json:"id,omitempty"`

	// Provider is the cloud provider (fieldSelector key "provider").
	Provider string `json:"provider,omitempty"`

	// Region is the region (fieldSelector key "region").
	Region string `json:"region,omitempty"`

	// Zone is the deprecated single zone; use Zones.
	Zone string `json:"zone,omitempty"`

	// Zones are the zones the cluster spans (fieldSelector key "zone").
	Zones []string `json:"zones,omitempty"`

	// Taints repel workloads whose policies do not tolerate them.
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ResourceModels describe node sizes by grade, for estimating how many
	// replicas fit (see ResourceSummary.AllocatableModelings).
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// ResourceModel is one grade of node size: each range bounds one resource.
type ResourceModel struct {
	Grade  uint                 `json:"grade"`
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange is the half-open interval [Min, Max) of one resource.
type ResourceModelRange struct {
	Name corev1.ResourceName `json:"name"`
	Min  resource.Quantity   `json:"min"`
	Max  resource.Quantity   `json:"max"`
}

// ClusterStatus is what the agent last reported.
type ClusterStatus struct {
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// APIEnablements lists the served resources, so that the scheduler skips
	// clusters that do not serve a template's kind.
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// Conditions include Ready.
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	NodeSummary     *NodeSummary     `json:"nodeSummary,omitempty"`
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// RemedyActions are actions requested on the cluster, such as
	// TrafficControl.
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement lists the resources of one group version.
type APIEnablement struct {
	GroupVersion string        `json:"groupVersion"`
	Resources    []APIResource `json:"resources,omitempty"`
}

// APIResource is one served resource.
type APIResource struct {
	// Name is the plural resource name, e.g. "deployments".
	Name string `json:"name"`
	// Kind is the kind, e.g. "Deployment".
	Kind string `json:"kind"`
}

// NodeSummary counts nodes.
type NodeSummary struct {
	TotalNum int32 `json:"totalNum,omitempty"`
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary is the cluster's capacity.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is requested by pods not yet scheduled.
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is requested by scheduled pods.
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// AllocatableModelings counts the nodes of each resource model grade.
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes of one grade.
type AllocatableModeling struct {
	Grade uint `json:"grade"`
	Count int  `json:"count"`
}

// Condition types and taints of a Cluster.
const (
	// ClusterConditionReady is true when the agent reports in time and the
	// member API server is healthy.
	ClusterConditionReady = "Ready"
	// TaintClusterNotReady is set when Ready is False.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"
	// TaintClusterUnreachable is set when Ready is Unknown.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"
)
