package native

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// replicaFunc returns the replica count and the pod template it is built
// from.
type replicaFunc func(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error)

var replicaHandlers = map[schema.GroupVersionKind]replicaFunc{
	deploymentGVK:  deploymentReplicas,
	replicaSetGVK:  replicaSetReplicas,
	statefulSetGVK: statefulSetReplicas,
	jobGVK:         jobReplicas,
	podGVK:         podReplicas,
}

// GetReplicas returns the desired replicas of obj and what each replica
// needs (nil when it needs nothing in particular).
func (i *Interpreter) GetReplicas(obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error) {
	handler, ok := replicaHandlers[obj.GroupVersionKind()]
	if !ok {
		return 0, &configv1alpha1.ReplicaRequirements{}, notFound(configv1alpha1.InterpreterOperationInterpretReplica, obj.GroupVersionKind())
	}
	replicas, template, err := handler(obj)
	if err != nil {
		return 0, nil, err
	}
	return replicas, ReplicaRequirements(template, i.quotaEstimate), nil
}

func deploymentReplicas(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	d := &appsv1.Deployment{}
	if err := fromUnstructured(obj.Object, d); err != nil {
		return 0, nil, err
	}
	return deref(d.Spec.Replicas), &d.Spec.Template, nil
}

func replicaSetReplicas(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	rs := &appsv1.ReplicaSet{}
	if err := fromUnstructured(obj.Object, rs); err != nil {
		return 0, nil, err
	}
	return deref(rs.Spec.Replicas), &rs.Spec.Template, nil
}

func statefulSetReplicas(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	sts := &appsv1.StatefulSet{}
	if err := fromUnstructured(obj.Object, sts); err != nil {
		return 0, nil, err
	}
	return deref(sts.Spec.Replicas), &sts.Spec.Template, nil
}

// jobReplicas is min(parallelism, completions); a missing parallelism is 0
// and missing completions equal parallelism.
func jobReplicas(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	job := &batchv1.Job{}
	if err := fromUnstructured(obj.Object, job); err != nil {
		return 0, nil, err
	}
	replicas := deref(job.Spec.Parallelism)
	if job.Spec.Completions != nil && *job.Spec.Completions < replicas {
		replicas = *job.Spec.Completions
	}
	return replicas, &job.Spec.Template, nil
}

// podReplicas: a Pod is one replica of itself.
func podReplicas(obj *unstructured.Unstructured) (int32, *corev1.PodTemplateSpec, error) {
	pod := &corev1.Pod{}
	if err := fromUnstructured(obj.Object, pod); err != nil {
		return 0, nil, err
	}
	return 1, &corev1.PodTemplateSpec{Spec: pod.Spec}, nil
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// ReplicaRequirements is Karmada's helper.GenerateReplicaRequirements: the
// node claim and summed resource requests of one pod of template, or nil
// when there are neither. quotaEstimate is the ResourceQuotaEstimate feature
// gate, which adds the template's namespace (empty in the templates of the
// native kinds) and the pod's priorityClassName.
func ReplicaRequirements(template *corev1.PodTemplateSpec, quotaEstimate bool) *configv1alpha1.ReplicaRequirements {
	claim := nodeClaim(&template.Spec)
	requests := podRequests(&template.Spec).list()
	if claim == nil && requests == nil {
		return nil
	}
	req := &configv1alpha1.ReplicaRequirements{NodeClaim: claim, ResourceRequest: requests}
	if quotaEstimate {
		req.Namespace = template.Namespace
		req.PriorityClassName = template.Spec.PriorityClassName
	}
	return req
}

// nodeClaim is the pod's node constraints; nil only when it has no node
// selector (an empty one counts), no required node affinity and no
// tolerations.
func nodeClaim(spec *corev1.PodSpec) *configv1alpha1.NodeClaim {
	var hard *corev1.NodeSelector
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		hard = spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if hard == nil && spec.NodeSelector == nil && len(spec.Tolerations) == 0 {
		return nil
	}
	return &configv1alpha1.NodeClaim{
		HardNodeAffinity: hard,
		NodeSelector:     spec.NodeSelector,
		Tolerations:      spec.Tolerations,
	}
}
