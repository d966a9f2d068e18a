package codec

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Object is an object of Tether's API: one of the policy, config, cluster,
// work and apps kinds. Every such type is a pointer to a struct with TypeMeta and
// ObjectMeta.
type Object interface {
	metav1.Object
	// GetObjectKind gives access to apiVersion and kind.
	GetObjectKind() schema.ObjectKind
	// SetDefaults applies the API defaults in place.
	SetDefaults()
	// Validate returns every problem, each with its field path; an empty
	// list means valid. It gives the same result before and after
	// SetDefaults.
	Validate() field.ErrorList
}

// KindInfo describes one kind of object.
type KindInfo struct {
	// GVK is the canonical (Tether) group, version and kind.
	GVK schema.GroupVersionKind
	// Namespaced is true for kinds that live in a namespace.
	Namespaced bool
	// New returns an empty object of the kind.
	New func() Object
}

// apiGroup is one API package: its canonical group version, its Karmada
// alias and its kinds.
type apiGroup struct {
	canonical, alias schema.GroupVersion
	kinds            []KindInfo
}

var groups = []apiGroup{
	{policyv1alpha1.GroupVersion, policyv1alpha1.KarmadaGroupVersion, []KindInfo{
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindPropagationPolicy), true,
			func() Object { return &policyv1alpha1.PropagationPolicy{} }},
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindClusterPropagationPolicy), false,
			func() Object { return &policyv1alpha1.ClusterPropagationPolicy{} }},
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindOverridePolicy), true,
			func() Object { return &policyv1alpha1.OverridePolicy{} }},
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindClusterOverridePolicy), false,
			func() Object { return &policyv1alpha1.ClusterOverridePolicy{} }},
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindFederatedResourceQuota), true,
			func() Object { return &policyv1alpha1.FederatedResourceQuota{} }},
		{kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindRolloutPolicy), true,
			func() Object { return &policyv1alpha1.RolloutPolicy{} }},
	}},
	{configv1alpha1.GroupVersion, configv1alpha1.KarmadaGroupVersion, []KindInfo{
		{kind(configv1alpha1.GroupVersion, configv1alpha1.KindResourceInterpreterCustomization), false,
			func() Object { return &configv1alpha1.ResourceInterpreterCustomization{} }},
		{kind(configv1alpha1.GroupVersion, configv1alpha1.KindResourceInterpreterWebhookConfiguration), false,
			func() Object { return &configv1alpha1.ResourceInterpreterWebhookConfiguration{} }},
	}},
	{clusterv1alpha1.GroupVersion, clusterv1alpha1.KarmadaGroupVersion, []KindInfo{
		{kind(clusterv1alpha1.GroupVersion, clusterv1alpha1.KindCluster), false,
			func() Object { return &clusterv1alpha1.Cluster{} }},
	}},
	{workv1alpha1.GroupVersion, workv1alpha1.KarmadaGroupVersion, []KindInfo{
		{kind(workv1alpha1.GroupVersion, workv1alpha1.KindResourceBinding), true,
			func() Object { return &workv1alpha1.ResourceBinding{} }},
		{kind(workv1alpha1.GroupVersion, workv1alpha1.KindClusterResourceBinding), false,
			func() Object { return &workv1alpha1.ClusterResourceBinding{} }},
	}},
	{appsv1alpha1.GroupVersion, appsv1alpha1.KarmadaGroupVersion, []KindInfo{
		{kind(appsv1alpha1.GroupVersion, appsv1alpha1.KindWorkloadRebalancer), false,
			func() Object { return &appsv1alpha1.WorkloadRebalancer{} }},
	}},
}

func kind(gv schema.GroupVersion, k string) schema.GroupVersionKind { return gv.WithKind(k) }

// tetherOnly are the kinds served only in their canonical group: Karmada
// has no such kind, so its group does not alias them.
var tetherOnly = map[schema.GroupVersionKind]bool{
	kind(policyv1alpha1.GroupVersion, policyv1alpha1.KindRolloutPolicy): true,
}

// byGVK indexes the kinds by canonical and alias group version and kind;
// ownGroups holds every API group of those group versions. Both are
// read-only after package initialisation.
var byGVK, ownGroups = buildIndex()

func buildIndex() (map[schema.GroupVersionKind]*KindInfo, map[string]bool) {
	m := make(map[schema.GroupVersionKind]*KindInfo)
	own := make(map[string]bool)
	for gi := range groups {
		g := &groups[gi]
		own[g.canonical.Group], own[g.alias.Group] = true, true
		for ki := range g.kinds {
			info := &g.kinds[ki]
			m[info.GVK] = info
			if !tetherOnly[info.GVK] {
				m[g.alias.WithKind(info.GVK.Kind)] = info
			}
		}
	}
	return m, own
}

// Lookup returns the kind of a document's apiVersion and kind, in Tether's
// or Karmada's group.
func Lookup(apiVersion, kind string) (*KindInfo, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	info, ok := byGVK[gv.WithKind(kind)]
	return info, ok
}

// Known reports whether apiVersion and kind name one of Tether's objects
// (in Tether's or Karmada's group). Documents that are not known are
// resource templates, unless OwnGroup says their group is an API group of
// Tether's, in which case they are mistakes.
func Known(apiVersion, kind string) bool {
	_, ok := Lookup(apiVersion, kind)
	return ok
}

// OwnGroup reports whether apiVersion belongs to one of Tether's API groups
// or to the Karmada groups it aliases (policy, config, cluster, work and
// apps, any version).
func OwnGroup(apiVersion string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && ownGroups[gv.Group]
}

// Canonical rewrites obj's apiVersion to Tether's group version (for
// example policy.karmada.io/v1alpha1 to policy.tether.io/v1alpha1) and
// reports whether obj is a known kind. Decoding keeps the apiVersion the
// document had, so that it encodes back as written; call Canonical before
// storing or comparing objects.
func Canonical(obj Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	info, ok := byGVK[gvk]
	if !ok {
		return false
	}
	obj.GetObjectKind().SetGroupVersionKind(info.GVK)
	return true
}

// Kinds returns every kind, with its canonical group version.
func Kinds() []KindInfo {
	var out []KindInfo
	for _, g := range groups {
		out = append(out, g.kinds...)
	}
	return out
}
