package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// InterpreterOperation names one operation of the resource interpreter.
type InterpreterOperation string

// The operations, with Karmada's names.
const (
	InterpreterOperationAll                 InterpreterOperation = "*"
	InterpreterOperationInterpretReplica    InterpreterOperation = "InterpretReplica"
	InterpreterOperationInterpretComponent  InterpreterOperation = "InterpretComponent"
	InterpreterOperationReviseReplica       InterpreterOperation = "ReviseReplica"
	InterpreterOperationInterpretStatus     InterpreterOperation = "InterpretStatus"
	InterpreterOperationPrune               InterpreterOperation = "Prune"
	InterpreterOperationRetain              InterpreterOperation = "Retain"
	InterpreterOperationAggregateStatus     InterpreterOperation = "AggregateStatus"
	InterpreterOperationInterpretHealth     InterpreterOperation = "InterpretHealth"
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
)

// ResourceHealth is a member object's health as judged by InterpretHealth.
type ResourceHealth string

// Health values.
const (
	ResourceHealthy   ResourceHealth = "Healthy"
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	ResourceUnknown   ResourceHealth = "Unknown"
)

// ReplicaRequirements is what one replica of a workload needs
// (Karmada's work/v1alpha2 ReplicaRequirements).
type ReplicaRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	Namespace         string              `json:"namespace,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node constraints of a replica.
type NodeClaim struct {
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	NodeSelector     map[string]string    `json:"nodeSelector,omitempty"`
	Tolerations      []corev1.Toleration  `json:"tolerations,omitempty"`
}

// Component is one pod template of a multi-template workload
// (Karmada's work/v1alpha2 Component).
type Component struct {
	Name                string                        `json:"name"`
	Replicas            int32                         `json:"replicas"`
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentReplicaRequirements is ReplicaRequirements without a namespace.
type ComponentReplicaRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// AggregatedStatusItem is one member cluster's status of a template, the
// input of AggregateStatus.
type AggregatedStatusItem struct {
	ClusterName    string                `json:"clusterName"`
	Status         *runtime.RawExtension `json:"status,omitempty"`
	Applied        bool                  `json:"applied,omitempty"`
	AppliedMessage string                `json:"appliedMessage,omitempty"`
	Health         ResourceHealth        `json:"health,omitempty"`
}

// DependentObjectReference names an object a template depends on, by name or
// by label selector.
type DependentObjectReference struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}
