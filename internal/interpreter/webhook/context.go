package webhook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// The wire format: Karmada's ResourceInterpreterContext
// (config.karmada.io/v1alpha1, pkg/apis/config/v1alpha1/interpretercontext_types.go).

// Context identifiers.
const (
	ContextAPIVersion = "config.karmada.io/v1alpha1"
	ContextKind       = "ResourceInterpreterContext"
	ContextVersion    = configv1alpha1.InterpreterContextVersion
)

// Context is a ResourceInterpreterContext: the request sent to a webhook and
// the response it returns in the same envelope.
type Context struct {
	metav1.TypeMeta `json:",inline"`
	Request         *Request  `json:"request,omitempty"`
	Response        *Response `json:"response,omitempty"`
}

// Request describes the object and the operation.
type Request struct {
	UID       types.UID                           `json:"uid"`
	Kind      metav1.GroupVersionKind             `json:"kind"`
	Name      string                              `json:"name"`
	Namespace string                              `json:"namespace,omitempty"`
	Operation configv1alpha1.InterpreterOperation `json:"operation"`
	Object    runtime.RawExtension                `json:"object,omitempty"`
	// ObservedObject is set for Retain only.
	ObservedObject *runtime.RawExtension `json:"observedObject,omitempty"`
	// DesiredReplicas is always set: the replicas for ReviseReplica, else 0.
	DesiredReplicas  *int32                                `json:"replicas,omitempty"`
	AggregatedStatus []configv1alpha1.AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// PatchType is how Response.Patch is encoded.
type PatchType string

// PatchTypeJSONPatch is RFC 6902, the only type accepted.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// Response is the webhook's answer.
type Response struct {
	// UID must echo the request's.
	UID        types.UID      `json:"uid"`
	Successful bool           `json:"successful"`
	Status     *RequestStatus `json:"status,omitempty"`
	// Patch is applied to the request object for Retain, ReviseReplica and
	// AggregateStatus; none means unchanged.
	Patch               []byte                                    `json:"patch,omitempty"`
	PatchType           *PatchType                                `json:"patchType,omitempty"`
	Replicas            *int32                                    `json:"replicas,omitempty"`
	ReplicaRequirements *configv1alpha1.ReplicaRequirements       `json:"replicaRequirements,omitempty"`
	Components          []configv1alpha1.Component                `json:"components,omitempty"`
	Dependencies        []configv1alpha1.DependentObjectReference `json:"dependencies,omitempty"`
	RawStatus           *runtime.RawExtension                     `json:"rawStatus,omitempty"`
	Healthy             *bool                                     `json:"healthy,omitempty"`
}

// RequestStatus explains a failure.
type RequestStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}
