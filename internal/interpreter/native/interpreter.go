package native

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// The GVKs with built-in handlers.
var (
	deploymentGVK    = appsv1.SchemeGroupVersion.WithKind("Deployment")
	replicaSetGVK    = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetGVK   = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	daemonSetGVK     = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	jobGVK           = batchv1.SchemeGroupVersion.WithKind("Job")
	cronJobGVK       = batchv1.SchemeGroupVersion.WithKind("CronJob")
	podGVK           = corev1.SchemeGroupVersion.WithKind("Pod")
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	serviceAcctGVK   = corev1.SchemeGroupVersion.WithKind("ServiceAccount")
	pvcGVK           = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	pvGVK            = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
	ingressGVK       = networkingv1.SchemeGroupVersion.WithKind("Ingress")
	pdbGVK           = policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	hpaGVK           = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	serviceImportGVK = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"}
)

// ErrComponentsNotImplemented is what GetComponents always returns: Karmada's
// native interpreter has no component handler.
var ErrComponentsNotImplemented = errors.New("no plan to implement this method yet")

// Interpreter is the built-in interpreter. It holds no state besides its
// options and is safe for concurrent use.
type Interpreter struct {
	// quotaEstimate is Karmada's ResourceQuotaEstimate feature gate: when on,
	// replica requirements carry the template's namespace and the pod's
	// priorityClassName.
	quotaEstimate bool
}

// Option configures an Interpreter.
type Option func(*Interpreter)

// WithResourceQuotaEstimate turns Karmada's ResourceQuotaEstimate feature gate
// on or off (default off).
func WithResourceQuotaEstimate(on bool) Option {
	return func(i *Interpreter) { i.quotaEstimate = on }
}

// New returns the built-in interpreter.
func New(opts ...Option) *Interpreter {
	i := &Interpreter{}
	for _, o := range opts {
		o(i)
	}
	return i
}

// HookEnabled reports whether a handler exists for gvk and op.
// InterpretStatus is enabled for every GVK; InterpretComponent never.
func (*Interpreter) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	var ok bool
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		_, ok = replicaHandlers[gvk]
	case configv1alpha1.InterpreterOperationReviseReplica:
		_, ok = reviseFields[gvk]
	case configv1alpha1.InterpreterOperationRetain:
		_, ok = retainHandlers[gvk]
	case configv1alpha1.InterpreterOperationAggregateStatus:
		_, ok = aggregateHandlers[gvk]
	case configv1alpha1.InterpreterOperationInterpretStatus:
		ok = true
	case configv1alpha1.InterpreterOperationInterpretHealth:
		_, ok = healthHandlers[gvk]
	case configv1alpha1.InterpreterOperationInterpretDependency:
		_, ok = dependencyHandlers[gvk]
	}
	return ok
}

// notFound is Karmada's error for an operation without a handler.
func notFound(op configv1alpha1.InterpreterOperation, gvk schema.GroupVersionKind) error {
	return fmt.Errorf("default %s interpreter for %q not found", op, gvk)
}

// GetComponents always fails: native has no component interpreter.
func (*Interpreter) GetComponents(*unstructured.Unstructured) ([]configv1alpha1.Component, error) {
	return nil, ErrComponentsNotImplemented
}

// fromUnstructured converts unstructured content into a typed object, as
// Karmada's helper.ConvertToTypedObject does.
func fromUnstructured(content map[string]any, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, out)
}

// toUnstructured converts a typed object back, as Karmada's
// helper.ToUnstructured does: unknown fields are gone and non-omitempty zero
// values appear.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: content}, nil
}
