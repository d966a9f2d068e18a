package clientapi

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// clusterObject is the JSON of a cluster as a cluster.tether.io/v1alpha1
// Cluster, the shape a Karmada user reads with kubectl get cluster -o
// yaml: the stored record (metadata with labels, annotations and the
// revision as resourceVersion; spec with taints and resource models), its
// status brought up to hb, the last heartbeat this replica received, when
// there is one. nil when it cannot be encoded (it always can: the record
// was decoded from JSON).
func clusterObject(c *clusterv1alpha1.Cluster, hb *agentv1.Heartbeat) []byte {
	obj := *c
	obj.APIVersion, obj.Kind = clusterv1alpha1.GroupVersion.String(), clusterv1alpha1.KindCluster
	if hb != nil {
		obj.Status = liveStatus(c.Status, hb)
	}
	js, err := json.Marshal(&obj)
	if err != nil {
		return nil
	}
	return js
}

// liveStatus is st with what hb reports in its place: Kubernetes version,
// conditions, resource summary and API enablements, each only when hb has
// it.
func liveStatus(st clusterv1alpha1.ClusterStatus, hb *agentv1.Heartbeat) clusterv1alpha1.ClusterStatus {
	if v := hb.GetKubernetesVersion(); v != "" {
		st.KubernetesVersion = v
	}
	if len(hb.GetConditions()) > 0 {
		st.Conditions = nil
		for _, c := range hb.GetConditions() {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: c.GetType(), Status: conditionStatus(c.GetStatus()),
				Reason: c.GetReason(), Message: c.GetMessage(), LastTransitionTime: metav1.NewTime(c.GetLastTransitionTime().AsTime())})
		}
	}
	if rs := hb.GetResourceSummary(); rs != nil {
		st.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: quantities(rs.GetAllocatable()),
			Allocated: quantities(rs.GetAllocated()), Allocating: quantities(rs.GetAllocating())}
		for _, m := range rs.GetAllocatableModelings() {
			st.ResourceSummary.AllocatableModelings = append(st.ResourceSummary.AllocatableModelings,
				clusterv1alpha1.AllocatableModeling{Grade: uint(max(m.GetGrade(), 0)), Count: int(m.GetCount())})
		}
	}
	if len(hb.GetApiEnablements()) > 0 {
		st.APIEnablements = nil
		for _, e := range hb.GetApiEnablements() {
			ae := clusterv1alpha1.APIEnablement{GroupVersion: e.GetGroupVersion()}
			for _, r := range e.GetResources() {
				ae.Resources = append(ae.Resources, clusterv1alpha1.APIResource{Name: r.GetName(), Kind: r.GetKind()})
			}
			st.APIEnablements = append(st.APIEnablements, ae)
		}
	}
	return st
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
