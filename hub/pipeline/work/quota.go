package work

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// QuotaBinding is the binding the renderer gives a FederatedResourceQuota
// stored with permanent ID id: it targets the clusters that
// spec.staticAssignments names, in order, and deletes what it placed when
// a cluster leaves the list or the quota is deleted (Karmada's
// federated-resource-quota-sync controller removes the Work). It names the
// quota (namespace, name), so that its works carry the quota's ownership.
func QuotaBinding(q *policyv1alpha1.FederatedResourceQuota, id types.UID) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{}
	b.Namespace, b.Name, b.UID = q.Namespace, q.Name, id
	for _, a := range q.Spec.StaticAssignments {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha1.TargetCluster{Name: a.ClusterName})
	}
	return b
}

// RenderQuota is the work of a FederatedResourceQuota's static assignment
// for one cluster, as Karmada's federated-resource-quota-sync controller
// builds it: a ResourceQuota named like the quota, in its namespace, with
// spec.hard the assignment's hard, owned by b (QuotaBinding). Its key is
// the quota's (KeyOf the stored quota), so that it never meets the work of
// a ResourceQuota template of the same name; the apply options are the
// defaults (server-side apply, Abort, DELETE). A cluster the quota does
// not assign is an error.
func RenderQuota(key string, q *policyv1alpha1.FederatedResourceQuota, b *workv1alpha1.ResourceBinding, cluster string) (*Work, error) {
	var hard corev1.ResourceList
	found := false
	for _, a := range q.Spec.StaticAssignments {
		if a.ClusterName == cluster {
			hard, found = a.Hard, true
		}
	}
	if !found {
		return nil, fmt.Errorf("render %s for cluster %s: the quota assigns the cluster nothing", key, cluster)
	}
	rq := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	rq.APIVersion, rq.Kind = "v1", "ResourceQuota"
	rq.Namespace, rq.Name = q.Namespace, q.Name
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rq)
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, cluster, err)
	}
	obj := &unstructured.Unstructured{Object: m}
	Prune(obj)
	setOwnership(obj, b, key)
	opts, err := ApplyOptions(obj, b)
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, cluster, err)
	}
	up, err := seal(key, obj, opts, bindingRef(b))
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, cluster, err)
	}
	return &Work{Upsert: up}, nil
}
