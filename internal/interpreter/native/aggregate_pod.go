package native

import (
	"reflect"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// podPhasePrecedence: the first phase any member is in wins.
var podPhasePrecedence = []corev1.PodPhase{corev1.PodFailed, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}

// aggregatePod replaces the status with the members' phase and container
// states. With no items at all (nil) it is only a typed round trip.
func aggregatePod(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	pod := &corev1.Pod{}
	if err := fromUnstructured(obj.Object, pod); err != nil {
		return nil, err
	}
	if items == nil {
		return toUnstructured(pod)
	}
	status := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{}}
	phases := map[corev1.PodPhase]bool{}
	for _, item := range items {
		if item.Status == nil {
			phases[corev1.PodPending] = true // not collected yet
		}
	}
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *corev1.PodStatus) {
		phases[s.Phase] = true
		status.ContainerStatuses = append(status.ContainerStatuses, readyAndState(s.ContainerStatuses)...)
		status.InitContainerStatuses = append(status.InitContainerStatuses, readyAndState(s.InitContainerStatuses)...)
	})
	if err != nil {
		return nil, err
	}
	for _, p := range podPhasePrecedence {
		if phases[p] {
			status.Phase = p
			break
		}
	}
	if reflect.DeepEqual(pod.Status, status) {
		return obj, nil
	}
	pod.Status = status
	return toUnstructured(pod)
}

// readyAndState keeps only ready and state of each container status.
func readyAndState(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range in {
		out = append(out, corev1.ContainerStatus{Ready: c.Ready, State: c.State})
	}
	return out
}

// pvPhasePrecedence: the first phase any member is in wins; a member without
// status counts as Pending.
var pvPhasePrecedence = []corev1.PersistentVolumePhase{
	corev1.VolumeFailed, corev1.VolumePending, corev1.VolumeAvailable, corev1.VolumeBound, corev1.VolumeReleased,
}

func aggregatePV(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	pv := &corev1.PersistentVolume{}
	if err := fromUnstructured(obj.Object, pv); err != nil {
		return nil, err
	}
	phases := map[corev1.PersistentVolumePhase]bool{}
	for _, item := range items {
		if item.Status == nil {
			phases[corev1.VolumePending] = true
		}
	}
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *corev1.PersistentVolumeStatus) {
		phases[s.Phase] = true
	})
	if err != nil {
		return nil, err
	}
	status := corev1.PersistentVolumeStatus{}
	for _, p := range pvPhasePrecedence {
		if phases[p] {
			status.Phase = p
			break
		}
	}
	if reflect.DeepEqual(pv.Status, status) {
		return obj, nil
	}
	pv.Status = status
	return toUnstructured(pv)
}

// aggregatePVC: Bound unless a member is not; Lost wins at once, otherwise
// the last non-Bound phase.
func aggregatePVC(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := fromUnstructured(obj.Object, pvc); err != nil {
		return nil, err
	}
	status := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}
	lost := false
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *corev1.PersistentVolumeClaimStatus) {
		switch {
		case lost:
		case s.Phase == corev1.ClaimLost:
			status.Phase, lost = corev1.ClaimLost, true
		case s.Phase != corev1.ClaimBound:
			status.Phase = s.Phase
		}
	})
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(pvc.Status, status) {
		return obj, nil
	}
	pvc.Status = status
	return toUnstructured(pvc)
}

// aggregatePDB sums the counters and prefixes disrupted pods with their
// cluster.
func aggregatePDB(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := fromUnstructured(obj.Object, pdb); err != nil {
		return nil, err
	}
	status := policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{}}
	err := eachStatus(items, func(item configv1alpha1.AggregatedStatusItem, s *policyv1.PodDisruptionBudgetStatus) {
		status.CurrentHealthy += s.CurrentHealthy
		status.DesiredHealthy += s.DesiredHealthy
		status.ExpectedPods += s.ExpectedPods
		status.DisruptionsAllowed += s.DisruptionsAllowed
		for pod, t := range s.DisruptedPods {
			status.DisruptedPods[item.ClusterName+"/"+pod] = t
		}
	})
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(pdb.Status, status) {
		return obj, nil
	}
	pdb.Status = status
	return toUnstructured(pdb)
}

// aggregateHPA sums currentReplicas and desiredReplicas.
func aggregateHPA(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := fromUnstructured(obj.Object, hpa); err != nil {
		return nil, err
	}
	status := autoscalingv2.HorizontalPodAutoscalerStatus{}
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *autoscalingv2.HorizontalPodAutoscalerStatus) {
		status.CurrentReplicas += s.CurrentReplicas
		status.DesiredReplicas += s.DesiredReplicas
	})
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(hpa.Status, status) {
		return obj, nil
	}
	hpa.Status = status
	return toUnstructured(hpa)
}
