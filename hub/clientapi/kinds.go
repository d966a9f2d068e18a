package clientapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/api/codec"
)

// builtinKinds are the Kubernetes kinds whose group and scope the hub
// knows without discovery (it has none: templates are not served by a
// kube-apiserver here). Other kinds are custom resources; see scopeOf.
var builtinKinds = map[schema.GroupKind]bool{ // value: namespaced
	{Kind: "Pod"}: true, {Kind: "Service"}: true, {Kind: "ConfigMap"}: true, {Kind: "Secret"}: true,
	{Kind: "ServiceAccount"}: true, {Kind: "PersistentVolumeClaim"}: true, {Kind: "Endpoints"}: true,
	{Kind: "LimitRange"}: true, {Kind: "ResourceQuota"}: true, {Kind: "ReplicationController"}: true,
	{Kind: "Event"}: true, {Kind: "Namespace"}: false, {Kind: "Node"}: false, {Kind: "PersistentVolume"}: false,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "apps", Kind: "ControllerRevision"}: true,
	{Group: "batch", Kind: "Job"}:               true, {Group: "batch", Kind: "CronJob"}: true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:          true,
	{Group: "networking.k8s.io", Kind: "Ingress"}:           true, {Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: false,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:      true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        false,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: false,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  false, {Group: "storage.k8s.io", Kind: "CSIDriver"}: false,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             false,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                    false,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               false,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: false,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   false,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                           false,
}

// crdKind is the kind of CustomResourceDefinitions, whose spec.scope says
// the scope of the custom resources they define.
var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// kindRef is a kind resolved to the group it is stored under.
type kindRef struct {
	group, kind string
	// own is true for Tether's kinds (policies, customizations ...).
	own bool
	// scope is the kind's scope when known.
	scope scope
}

// scope is what is known of a kind's scope.
type scope int

const (
	scopeUnknown scope = iota
	scopeNamespaced
	scopeCluster
)

func scopeOfBool(namespaced bool) scope {
	if namespaced {
		return scopeNamespaced
	}
	return scopeCluster
}

// resolveKind finds where objects of apiVersion and kind are stored. The
// apiVersion may be empty when the kind alone is unambiguous: one of
// Tether's kinds or a built-in Kubernetes kind.
func resolveKind(apiVersion, kind string) (kindRef, error) {
	if kind == "" {
		return kindRef{}, fmt.Errorf("%w: kind is required", ErrInvalid)
	}
	if apiVersion != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return kindRef{}, fmt.Errorf("%w: apiVersion %q: %v", ErrInvalid, apiVersion, err)
		}
		if info, ok := codec.Lookup(apiVersion, kind); ok {
			return kindRef{group: info.GVK.Group, kind: kind, own: true, scope: scopeOfBool(info.Namespaced)}, nil
		}
		if codec.OwnGroup(apiVersion) {
			return kindRef{}, fmt.Errorf("%w: %s is not a kind of %s", ErrInvalid, kind, apiVersion)
		}
		r := kindRef{group: gv.Group, kind: kind}
		if ns, ok := builtinKinds[schema.GroupKind{Group: gv.Group, Kind: kind}]; ok {
			r.scope = scopeOfBool(ns)
		}
		return r, nil
	}
	for _, info := range codec.Kinds() {
		if info.GVK.Kind == kind {
			return kindRef{group: info.GVK.Group, kind: kind, own: true, scope: scopeOfBool(info.Namespaced)}, nil
		}
	}
	for gk, ns := range builtinKinds {
		if gk.Kind == kind {
			return kindRef{group: gk.Group, kind: kind, scope: scopeOfBool(ns)}, nil
		}
	}
	return kindRef{}, fmt.Errorf("%w: kind %s alone is ambiguous (not a Tether or built-in Kubernetes kind); give its apiVersion", ErrInvalid, kind)
}
