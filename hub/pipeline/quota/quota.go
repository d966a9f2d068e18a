package quota

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Usage is what rb uses of its namespace's quotas, as Karmada computes it:
// with components, the requests of one full set (each component's
// replicas times its per-replica requests) times the number of target
// clusters; otherwise the replicas of every target cluster times the
// per-replica requests. A nil binding uses nothing.
func Usage(rb *workv1alpha1.ResourceBinding) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, rl := range UsageByCluster(rb) {
		Add(out, rl)
	}
	return out
}

// UsageByCluster is Usage per target cluster (clusters that use nothing
// are left out).
func UsageByCluster(rb *workv1alpha1.ResourceBinding) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	if rb == nil {
		return out
	}
	set := componentSet(rb)
	for _, tc := range rb.Spec.Clusters {
		var rl corev1.ResourceList
		switch {
		case len(rb.Spec.Components) > 0:
			rl = times(set, 1)
		case rb.Spec.ReplicaRequirements != nil:
			rl = times(rb.Spec.ReplicaRequirements.ResourceRequest, int64(tc.Replicas))
		}
		if len(rl) > 0 {
			if cur, ok := out[tc.Name]; ok {
				Add(cur, rl)
				continue
			}
			out[tc.Name] = rl
		}
	}
	return out
}

// componentSet is the requests of one set of rb's components.
func componentSet(rb *workv1alpha1.ResourceBinding) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range rb.Spec.Components {
		if c.ReplicaRequirements != nil {
			Add(out, times(c.ReplicaRequirements.ResourceRequest, int64(c.Replicas)))
		}
	}
	return out
}

// times is rl with every non-zero quantity multiplied by n (nil for n 0).
func times(rl corev1.ResourceList, n int64) corev1.ResourceList {
	if n == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, q := range rl {
		if q.IsZero() {
			continue
		}
		q = q.DeepCopy()
		q.Mul(n)
		out[k] = q
	}
	return out
}

// Add adds b to a, in place.
func Add(a, b corev1.ResourceList) {
	for k, q := range b {
		cur := a[k]
		cur.Add(q)
		a[k] = cur
	}
}

// ExceededError says which quota a template's new usage would exceed.
type ExceededError struct {
	// Quota is namespace/name of the FederatedResourceQuota.
	Quota string
	// Resource is the first resource (by name) over the limit.
	Resource corev1.ResourceName
	// Used is the namespace's usage now, Template's share of it included;
	// Requested the template's new usage; Allowed the quota's overall.
	Used, Template, Requested, Allowed resource.Quantity
	// Subject names what changes, "this template" when empty.
	Subject string
}

func (e *ExceededError) Error() string {
	subject := cmp.Or(e.Subject, "this template")
	return fmt.Sprintf("FederatedResourceQuota %s exceeded for %s: used %s in the namespace (%s by %s), %s would use %s, allowed %s",
		e.Quota, e.Resource, e.Used.String(), e.Template.String(), subject, subject, e.Requested.String(), e.Allowed.String())
}

// Check decides, as Karmada's resourcebinding webhook does, whether a
// template whose usage goes from old to next fits quota q when its
// namespace uses used (old included): every limited resource's
// used - old + next must stay within q's overall. Unlike Karmada, a
// change that increases none of the resources q limits always fits, so
// that a namespace over a lowered quota can still scale down. A refusal
// is an *ExceededError.
func Check(q *policyv1alpha1.FederatedResourceQuota, used, old, next corev1.ResourceList) error {
	grows := false
	for k := range q.Spec.Overall {
		n, o := next[k], old[k]
		if n.Cmp(o) > 0 {
			grows = true
		}
	}
	if !grows {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(q.Spec.Overall)) {
		after := used[k].DeepCopy()
		after.Sub(old[k])
		after.Add(next[k])
		if limit := q.Spec.Overall[k]; after.Cmp(limit) > 0 {
			return &ExceededError{Quota: q.Namespace + "/" + q.Name, Resource: k,
				Used: used[k], Template: old[k], Requested: next[k], Allowed: limit}
		}
	}
	return nil
}

// Status is q's status given the bindings of its namespace: overall is
// spec.overall, overallUsed the bindings' usage of the resources q limits,
// and aggregatedStatus, per cluster by name, every cluster they use or a
// static assignment names: used is what the bindings use there of the
// resources q limits (not the member ResourceQuota's own status), hard
// the cluster's static assignment, or spec.overall for a cluster without
// one (the limit its usage counts against).
func Status(q *policyv1alpha1.FederatedResourceQuota, bindings []*workv1alpha1.ResourceBinding) policyv1alpha1.FederatedResourceQuotaStatus {
	used, byCluster := corev1.ResourceList{}, map[string]corev1.ResourceList{}
	hard := map[string]corev1.ResourceList{}
	for _, a := range q.Spec.StaticAssignments {
		hard[a.ClusterName], byCluster[a.ClusterName] = a.Hard, corev1.ResourceList{}
	}
	for _, rb := range bindings {
		for c, rl := range UsageByCluster(rb) {
			if byCluster[c] == nil {
				byCluster[c] = corev1.ResourceList{}
			}
			Add(byCluster[c], limited(rl, q.Spec.Overall))
			Add(used, limited(rl, q.Spec.Overall))
		}
	}
	st := policyv1alpha1.FederatedResourceQuotaStatus{Overall: q.Spec.Overall, OverallUsed: used}
	for _, c := range slices.Sorted(maps.Keys(byCluster)) {
		h, ok := hard[c]
		if !ok {
			h = q.Spec.Overall
		}
		st.AggregatedStatus = append(st.AggregatedStatus, policyv1alpha1.ClusterQuotaStatus{ClusterName: c,
			ResourceQuotaStatus: corev1.ResourceQuotaStatus{Hard: h, Used: byCluster[c]}})
	}
	return st
}

// limited is rl's resources that limits names.
func limited(rl, limits corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range rl {
		if _, ok := limits[k]; ok {
			out[k] = v
		}
	}
	return out
}
