package lease

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// ClusterStatus is stored, a cluster's recorded status, with what hb, its
// agent's last heartbeat, reports in its place: Kubernetes version,
// conditions, resource summary and API enablements, each only when hb has
// it (a heartbeat whose discovery failed keeps the recorded enablements).
// It is the one conversion of a heartbeat into a Cluster's status: the
// client API shows it, the scheduler places by it.
func ClusterStatus(stored clusterv1alpha1.ClusterStatus, hb *agentv1.Heartbeat) clusterv1alpha1.ClusterStatus {
	st := stored
	if v := hb.GetKubernetesVersion(); v != "" {
		st.KubernetesVersion = v
	}
	if len(hb.GetConditions()) > 0 {
		st.Conditions = make([]metav1.Condition, 0, len(hb.GetConditions()))
		for _, c := range hb.GetConditions() {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: c.GetType(), Status: conditionStatus(c.GetStatus()),
				Reason: c.GetReason(), Message: c.GetMessage(), LastTransitionTime: metav1.NewTime(c.GetLastTransitionTime().AsTime())})
		}
	}
	if rs := hb.GetResourceSummary(); rs != nil {
		st.ResourceSummary = resourceSummary(rs)
	}
	if apis := APIEnablements(hb); len(apis) > 0 {
		st.APIEnablements = apis
	}
	return st
}

// APIEnablements converts a heartbeat's API enablements to the Cluster
// type's, in the agent's order (sorted by group version and resource);
// empty when hb has none.
func APIEnablements(hb *agentv1.Heartbeat) []clusterv1alpha1.APIEnablement {
	out := make([]clusterv1alpha1.APIEnablement, 0, len(hb.GetApiEnablements()))
	for _, e := range hb.GetApiEnablements() {
		ae := clusterv1alpha1.APIEnablement{GroupVersion: e.GetGroupVersion()}
		for _, r := range e.GetResources() {
			ae.Resources = append(ae.Resources, clusterv1alpha1.APIResource{Name: r.GetName(), Kind: r.GetKind()})
		}
		out = append(out, ae)
	}
	return out
}

// resourceSummary converts the heartbeat's resource summary.
func resourceSummary(rs *agentv1.ResourceSummary) *clusterv1alpha1.ResourceSummary {
	out := &clusterv1alpha1.ResourceSummary{Allocatable: quantities(rs.GetAllocatable()),
		Allocated: quantities(rs.GetAllocated()), Allocating: quantities(rs.GetAllocating())}
	for _, m := range rs.GetAllocatableModelings() {
		out.AllocatableModelings = append(out.AllocatableModelings,
			clusterv1alpha1.AllocatableModeling{Grade: uint(max(m.GetGrade(), 0)), Count: int(m.GetCount())})
	}
	return out
}

func conditionStatus(s agentv1.ConditionStatus) metav1.ConditionStatus {
	switch s {
	case agentv1.ConditionStatus_CONDITION_STATUS_TRUE:
		return metav1.ConditionTrue
	case agentv1.ConditionStatus_CONDITION_STATUS_FALSE:
		return metav1.ConditionFalse
	}
	return metav1.ConditionUnknown
}

// quantities converts reported quantity strings; an unparsable one is left
// out (the agent validates what it sends).
func quantities(m map[string]string) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(m))
	for name, v := range m {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[corev1.ResourceName(name)] = q
		}
	}
	return out
}
