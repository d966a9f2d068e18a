package clientapi

import (
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// installOrder is the order in which Apply writes the kinds it knows, by
// canonical group ("" for the core group) and kind: Namespaces, CustomResourceDefinitions, then
// Tether's own kinds (the interpreter's customizations before the policies
// that read their replicas, override policies before the propagation
// policies that make works, so that no template is bound or rendered
// without them), then templates in Helm's install order
// (helm.sh/helm/v3/pkg/releaseutil.InstallOrder). Kinds not listed (custom
// resources) come last, after the CustomResourceDefinitions that define
// them.
var installOrder = []store.ObjectRef{
	{Group: "", Kind: "Namespace"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: configv1alpha1.GroupName, Kind: configv1alpha1.KindResourceInterpreterCustomization},
	{Group: configv1alpha1.GroupName, Kind: configv1alpha1.KindResourceInterpreterWebhookConfiguration},
	{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindClusterOverridePolicy},
	{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindOverridePolicy},
	{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindClusterPropagationPolicy},
	{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindPropagationPolicy},
	{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindFederatedResourceQuota},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"},
	{Group: "", Kind: "ResourceQuota"},
	{Group: "", Kind: "LimitRange"},
	{Group: "policy", Kind: "PodDisruptionBudget"},
	{Group: "", Kind: "ServiceAccount"},
	{Group: "", Kind: "Secret"},
	{Group: "", Kind: "ConfigMap"},
	{Group: "storage.k8s.io", Kind: "StorageClass"},
	{Group: "", Kind: "PersistentVolume"},
	{Group: "", Kind: "PersistentVolumeClaim"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
	{Group: "", Kind: "Service"},
	{Group: "apps", Kind: "DaemonSet"},
	{Group: "", Kind: "Pod"},
	{Group: "", Kind: "ReplicationController"},
	{Group: "apps", Kind: "ReplicaSet"},
	{Group: "apps", Kind: "Deployment"},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"},
	{Group: "apps", Kind: "StatefulSet"},
	{Group: "batch", Kind: "Job"},
	{Group: "batch", Kind: "CronJob"},
	{Group: "networking.k8s.io", Kind: "IngressClass"},
	{Group: "networking.k8s.io", Kind: "Ingress"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
}

// tierOf indexes installOrder: group and kind → position.
var tierOf = func() map[store.ObjectRef]int {
	m := make(map[store.ObjectRef]int, len(installOrder))
	for i, k := range installOrder {
		m[k] = i
	}
	return m
}()

// writeTier is the position of key's kind in installOrder; kinds not
// listed share the last tier.
func writeTier(key store.ObjectRef) int {
	if t, ok := tierOf[store.ObjectRef{Group: key.Group, Kind: key.Kind}]; ok {
		return t
	}
	return len(installOrder)
}

// tiers groups the plans to write (UNCHANGED ones left out) by writeTier,
// lowest first, each in input order.
func tiers(plans map[*item]*plan) [][]*plan {
	byTier := make([][]*plan, len(installOrder)+1)
	for _, p := range orderedPlans(plans) {
		if p.outcome == hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
			continue
		}
		t := writeTier(p.it.key)
		byTier[t] = append(byTier[t], p)
	}
	out := byTier[:0]
	for _, ps := range byTier {
		if len(ps) > 0 {
			out = append(out, ps)
		}
	}
	return out
}
