package native

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

type healthFunc func(obj *unstructured.Unstructured) (bool, error)

var healthHandlers = map[schema.GroupVersionKind]healthFunc{
	deploymentGVK:  deploymentHealthy,
	statefulSetGVK: statefulSetHealthy,
	replicaSetGVK:  replicaSetHealthy,
	daemonSetGVK:   daemonSetHealthy,
	serviceGVK:     serviceHealthy,
	ingressGVK:     ingressHealthy,
	pvcGVK:         pvcHealthy,
	podGVK:         podHealthy,
	pdbGVK:         pdbHealthy,
}

// InterpretHealth reports whether a member object is healthy.
func (*Interpreter) InterpretHealth(obj *unstructured.Unstructured) (bool, error) {
	handler, ok := healthHandlers[obj.GroupVersionKind()]
	if !ok {
		return false, notFound(configv1alpha1.InterpreterOperationInterpretHealth, obj.GroupVersionKind())
	}
	return handler(obj)
}

// rolledOut: the controller saw the latest spec, every desired replica is
// updated and every updated one is available.
func rolledOut(generation, observed int64, replicas *int32, updated, available int32) bool {
	return observed == generation && (replicas == nil || updated >= *replicas) && available >= updated
}

func deploymentHealthy(obj *unstructured.Unstructured) (bool, error) {
	d := &appsv1.Deployment{}
	if err := fromUnstructured(obj.Object, d); err != nil {
		return false, err
	}
	return rolledOut(d.Generation, d.Status.ObservedGeneration, d.Spec.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas), nil
}

func statefulSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	s := &appsv1.StatefulSet{}
	if err := fromUnstructured(obj.Object, s); err != nil {
		return false, err
	}
	return rolledOut(s.Generation, s.Status.ObservedGeneration, s.Spec.Replicas, s.Status.UpdatedReplicas, s.Status.AvailableReplicas), nil
}

func replicaSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	rs := &appsv1.ReplicaSet{}
	if err := fromUnstructured(obj.Object, rs); err != nil {
		return false, err
	}
	if rs.Status.ObservedGeneration != rs.Generation {
		return false, nil
	}
	return rs.Spec.Replicas == nil || rs.Status.AvailableReplicas >= *rs.Spec.Replicas, nil
}

func daemonSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	ds := &appsv1.DaemonSet{}
	if err := fromUnstructured(obj.Object, ds); err != nil {
		return false, err
	}
	s := ds.Status
	return s.ObservedGeneration == ds.Generation && s.UpdatedNumberScheduled >= s.DesiredNumberScheduled &&
		s.NumberAvailable >= s.UpdatedNumberScheduled, nil
}

// serviceHealthy: only a LoadBalancer can be unhealthy, until it has an
// address.
func serviceHealthy(obj *unstructured.Unstructured) (bool, error) {
	svc := &corev1.Service{}
	if err := fromUnstructured(obj.Object, svc); err != nil {
		return false, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return true, nil
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.Hostname != "" || ing.IP != "" {
			return true, nil
		}
	}
	return false, nil
}

func ingressHealthy(obj *unstructured.Unstructured) (bool, error) {
	ing := &networkingv1.Ingress{}
	if err := fromUnstructured(obj.Object, ing); err != nil {
		return false, err
	}
	for _, e := range ing.Status.LoadBalancer.Ingress {
		if e.Hostname != "" || e.IP != "" {
			return true, nil
		}
	}
	return false, nil
}

func pvcHealthy(obj *unstructured.Unstructured) (bool, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := fromUnstructured(obj.Object, pvc); err != nil {
		return false, err
	}
	return pvc.Status.Phase == corev1.ClaimBound, nil
}

// podHealthy: Succeeded, or Running with Ready=True.
func podHealthy(obj *unstructured.Unstructured) (bool, error) {
	pod := &corev1.Pod{}
	if err := fromUnstructured(obj.Object, pod); err != nil {
		return false, err
	}
	if pod.Status.Phase == corev1.PodSucceeded {
		return true, nil
	}
	if pod.Status.Phase != corev1.PodRunning {
		return false, nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, nil
		}
	}
	return false, nil
}

func pdbHealthy(obj *unstructured.Unstructured) (bool, error) {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := fromUnstructured(obj.Object, pdb); err != nil {
		return false, err
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy, nil
}
