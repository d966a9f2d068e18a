package overrides

import (
	"cmp"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Applied records one rule applied to the object: the policy's name and
// the overriders of that rule (Karmada's OverridePolicyShadow). A policy
// with several matching rules appears once per rule.
type Applied struct {
	PolicyName string                    `json:"policyName"`
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Result is the object to send to one cluster and what was applied to it.
type Result struct {
	// Object is the overridden copy; the template passed in is not modified.
	Object *unstructured.Unstructured
	// ClusterOverrides and Overrides list the applied rules of
	// ClusterOverridePolicies and OverridePolicies in application order.
	ClusterOverrides []Applied
	Overrides        []Applied
}

// policy is a ClusterOverridePolicy or an OverridePolicy reduced to what
// ordering and application need.
type policy struct {
	kind      string // "ClusterOverridePolicy" or "OverridePolicy", for errors
	name      string
	namespace string
	spec      *policyv1alpha1.OverrideSpec
	priority  Priority
}

// Apply returns a copy of obj with every matching policy applied for
// cluster, in Karmada's order: all ClusterOverridePolicies, then — only
// when obj is namespaced — the OverridePolicies of obj's namespace (those
// of other namespaces are ignored). Within each kind, policies whose
// resourceSelectors are empty or match obj are applied by implicit
// priority ascending (no selectors or match-all, then labelSelector, then
// name), then by name, so the most specific applies last and wins. In each
// policy every rule whose targetCluster is nil or matches cluster applies,
// in order. The first failure aborts everything and is returned as *Error.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	cops []policyv1alpha1.ClusterOverridePolicy, ops []policyv1alpha1.OverridePolicy) (*Result, error) {
	if obj == nil || cluster == nil {
		return nil, errors.New("overrides: object and cluster are required")
	}
	res := &Result{Object: obj.DeepCopy()}
	var err error
	res.ClusterOverrides, err = applyPolicies(res.Object, cluster, clusterPolicies(res.Object, cops))
	if err != nil {
		return nil, err
	}
	if res.Object.GetNamespace() == "" {
		return res, nil
	}
	res.Overrides, err = applyPolicies(res.Object, cluster, namespacedPolicies(res.Object, ops))
	if err != nil {
		return nil, err
	}
	return res, nil
}

// clusterPolicies returns the ClusterOverridePolicies that match obj, in
// application order.
func clusterPolicies(obj *unstructured.Unstructured, in []policyv1alpha1.ClusterOverridePolicy) []policy {
	var out []policy
	for i := range in {
		out = appendIfMatches(out, obj, policy{kind: "ClusterOverridePolicy", name: in[i].Name, spec: &in[i].Spec})
	}
	return sortPolicies(out)
}

// namespacedPolicies returns the OverridePolicies of obj's namespace that
// match obj, in application order.
func namespacedPolicies(obj *unstructured.Unstructured, in []policyv1alpha1.OverridePolicy) []policy {
	var out []policy
	for i := range in {
		if in[i].Namespace != obj.GetNamespace() {
			continue
		}
		out = appendIfMatches(out, obj, policy{kind: "OverridePolicy", name: in[i].Name, namespace: in[i].Namespace, spec: &in[i].Spec})
	}
	return sortPolicies(out)
}

// appendIfMatches appends p, with its implicit priority for obj, when its
// resourceSelectors are empty (match all) or one of them matches obj.
func appendIfMatches(out []policy, obj *unstructured.Unstructured, p policy) []policy {
	if len(p.spec.ResourceSelectors) == 0 {
		p.priority = PriorityMatchAll
		return append(out, p)
	}
	if p.priority = ResourcePriority(obj, p.spec.ResourceSelectors...); p.priority == PriorityMismatch {
		return out
	}
	return append(out, p)
}

// sortPolicies orders policies by implicit priority, then name, ascending.
func sortPolicies(ps []policy) []policy {
	slices.SortStableFunc(ps, func(a, b policy) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.name, b.name))
	})
	return ps
}

// rules returns a policy's overrideRules or, when there are none, the
// deprecated targetCluster/overriders pair as one rule (index -1).
func rules(spec *policyv1alpha1.OverrideSpec) ([]policyv1alpha1.RuleWithCluster, bool) {
	if len(spec.OverrideRules) > 0 {
		return spec.OverrideRules, false
	}
	return []policyv1alpha1.RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}, true
}

// applyPolicies applies the rules of ps that target cluster to obj, in
// place, and lists them as written (valueFrom unresolved). Values taken
// from the cluster are resolved first (resolve).
func applyPolicies(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, ps []policy) ([]Applied, error) {
	var applied []Applied
	for _, p := range ps {
		rs, legacy := rules(p.spec)
		for i := range rs {
			if rs[i].TargetCluster != nil && !MatchesCluster(cluster, *rs[i].TargetCluster) {
				continue
			}
			o, err := resolve(&rs[i].Overriders, cluster)
			if err == nil {
				err = applyOverriders(obj, o)
			}
			if err != nil {
				return nil, newError(p, i, legacy, err)
			}
			applied = append(applied, Applied{PolicyName: p.name, Overriders: rs[i].Overriders})
		}
	}
	return applied, nil
}
