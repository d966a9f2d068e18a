package native

import (
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GenerationAnnotation on a member object records the resource template
// generation it was built from; workload status reflection requires it.
const GenerationAnnotation = "resourcetemplate.karmada.io/generation"

// reflectFunc turns an object's status (present and a map) into what the
// member reports.
type reflectFunc func(obj *unstructured.Unstructured, status map[string]any) (any, error)

var reflectHandlers = map[schema.GroupVersionKind]reflectFunc{
	deploymentGVK:  reflectDeployment,
	replicaSetGVK:  reflectReplicaSet,
	statefulSetGVK: reflectStatefulSet,
	daemonSetGVK:   reflectDaemonSet,
	serviceGVK:     reflectService,
	jobGVK:         reflectJob,
	pdbGVK:         reflectPDB,
	hpaGVK:         reflectHPA,
}

// The member statuses of workloads carry the generations the aggregation
// compares (Karmada's Wrapped*Status types).
type (
	memberGenerations struct {
		Generation                 int64 `json:"generation,omitempty"`
		ResourceTemplateGeneration int64 `json:"resourceTemplateGeneration,omitempty"`
	}
	deploymentMemberStatus struct {
		memberGenerations
		appsv1.DeploymentStatus
	}
	replicaSetMemberStatus struct {
		memberGenerations
		appsv1.ReplicaSetStatus
	}
	statefulSetMemberStatus struct {
		memberGenerations
		appsv1.StatefulSetStatus
	}
	daemonSetMemberStatus struct {
		memberGenerations
		appsv1.DaemonSetStatus
	}
)

// ReflectStatus returns the status a member reports for obj: a kind's chosen
// fields, or the whole .status for kinds without a handler; nil when obj has
// no status.
func (*Interpreter) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	status, ok, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || !ok {
		return nil, err
	}
	var out any = status
	if handler, ok := reflectHandlers[obj.GroupVersionKind()]; ok {
		if out, err = handler(obj, status); err != nil || out == nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// generations reads metadata.generation and the template generation
// annotation, which must parse as an int64.
func generations(obj *unstructured.Unstructured) (memberGenerations, error) {
	tmpl, err := strconv.ParseInt(obj.GetAnnotations()[GenerationAnnotation], 10, 64)
	if err != nil {
		return memberGenerations{}, err
	}
	return memberGenerations{Generation: obj.GetGeneration(), ResourceTemplateGeneration: tmpl}, nil
}

// typedStatus converts the status map into out, with Karmada's message.
func typedStatus(status map[string]any, out any, kind string) error {
	if err := fromUnstructured(status, out); err != nil {
		return fmt.Errorf("failed to convert %s from map[string]interface{}: %v", kind, err)
	}
	return nil
}

// nilIfEmpty returns nil when v marshals to {}, so no status is reported.
func nilIfEmpty(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "{}" {
		return nil, err
	}
	return v, nil
}

func reflectDeployment(obj *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &appsv1.DeploymentStatus{}
	if err := typedStatus(status, s, "DeploymentStatus"); err != nil {
		return nil, err
	}
	gens, err := generations(obj)
	if err != nil {
		return nil, err
	}
	return nilIfEmpty(deploymentMemberStatus{memberGenerations: gens, DeploymentStatus: appsv1.DeploymentStatus{
		Replicas: s.Replicas, UpdatedReplicas: s.UpdatedReplicas, ReadyReplicas: s.ReadyReplicas,
		AvailableReplicas: s.AvailableReplicas, UnavailableReplicas: s.UnavailableReplicas,
		ObservedGeneration: s.ObservedGeneration,
	}})
}

func reflectReplicaSet(obj *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &appsv1.ReplicaSetStatus{}
	if err := typedStatus(status, s, "ReplicaSetStatus"); err != nil {
		return nil, err
	}
	gens, err := generations(obj)
	if err != nil {
		return nil, err
	}
	return nilIfEmpty(replicaSetMemberStatus{memberGenerations: gens, ReplicaSetStatus: appsv1.ReplicaSetStatus{
		Replicas: s.Replicas, ReadyReplicas: s.ReadyReplicas, AvailableReplicas: s.AvailableReplicas,
		ObservedGeneration: s.ObservedGeneration,
	}})
}

// reflectStatefulSet reports no observedGeneration (as Karmada does).
func reflectStatefulSet(obj *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &appsv1.StatefulSetStatus{}
	if err := typedStatus(status, s, "StatefulSetStatus"); err != nil {
		return nil, err
	}
	gens, err := generations(obj)
	if err != nil {
		return nil, err
	}
	return statefulSetMemberStatus{memberGenerations: gens, StatefulSetStatus: appsv1.StatefulSetStatus{
		AvailableReplicas: s.AvailableReplicas, CurrentReplicas: s.CurrentReplicas,
		ReadyReplicas: s.ReadyReplicas, Replicas: s.Replicas, UpdatedReplicas: s.UpdatedReplicas,
	}}, nil
}

func reflectDaemonSet(obj *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &appsv1.DaemonSetStatus{}
	if err := typedStatus(status, s, "DaemonSetStatus"); err != nil {
		return nil, err
	}
	gens, err := generations(obj)
	if err != nil {
		return nil, err
	}
	return daemonSetMemberStatus{memberGenerations: gens, DaemonSetStatus: appsv1.DaemonSetStatus{
		CurrentNumberScheduled: s.CurrentNumberScheduled, NumberMisscheduled: s.NumberMisscheduled,
		DesiredNumberScheduled: s.DesiredNumberScheduled, NumberReady: s.NumberReady,
		ObservedGeneration: s.ObservedGeneration, UpdatedNumberScheduled: s.UpdatedNumberScheduled,
		NumberAvailable: s.NumberAvailable, NumberUnavailable: s.NumberUnavailable,
	}}, nil
}

// reflectService reports the load balancer of LoadBalancer Services only.
func reflectService(obj *unstructured.Unstructured, status map[string]any) (any, error) {
	typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if typ != string(corev1.ServiceTypeLoadBalancer) {
		return nil, nil
	}
	s := &corev1.ServiceStatus{}
	if err := typedStatus(status, s, "ServiceStatus"); err != nil {
		return nil, err
	}
	return corev1.ServiceStatus{LoadBalancer: s.LoadBalancer}, nil
}

func reflectJob(_ *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &batchv1.JobStatus{}
	if err := typedStatus(status, s, "JobStatus"); err != nil {
		return nil, err
	}
	return batchv1.JobStatus{
		Active: s.Active, Succeeded: s.Succeeded, Failed: s.Failed, Conditions: s.Conditions,
		StartTime: s.StartTime, CompletionTime: s.CompletionTime,
	}, nil
}

func reflectPDB(_ *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &policyv1.PodDisruptionBudgetStatus{}
	if err := typedStatus(status, s, "PodDisruptionBudget"); err != nil {
		return nil, err
	}
	return policyv1.PodDisruptionBudgetStatus{
		DisruptionsAllowed: s.DisruptionsAllowed, ExpectedPods: s.ExpectedPods,
		DesiredHealthy: s.DesiredHealthy, CurrentHealthy: s.CurrentHealthy, DisruptedPods: s.DisruptedPods,
	}, nil
}

func reflectHPA(_ *unstructured.Unstructured, status map[string]any) (any, error) {
	s := &autoscalingv2.HorizontalPodAutoscalerStatus{}
	if err := typedStatus(status, s, "HorizontalPodAutoscaler"); err != nil {
		return nil, err
	}
	return autoscalingv2.HorizontalPodAutoscalerStatus{
		CurrentReplicas: s.CurrentReplicas, DesiredReplicas: s.DesiredReplicas,
	}, nil
}
