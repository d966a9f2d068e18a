package native

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

type dependencyFunc func(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error)

var dependencyHandlers = map[schema.GroupVersionKind]dependencyFunc{
	deploymentGVK:    deploymentDependencies,
	replicaSetGVK:    replicaSetDependencies,
	statefulSetGVK:   statefulSetDependencies,
	daemonSetGVK:     daemonSetDependencies,
	jobGVK:           jobDependencies,
	cronJobGVK:       cronJobDependencies,
	podGVK:           podDependencies,
	ingressGVK:       ingressDependencies,
	serviceImportGVK: serviceImportDependencies,
}

// GetDependencies returns the objects obj needs in a member cluster,
// checked with VerifyDependencies.
func (*Interpreter) GetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	handler, ok := dependencyHandlers[obj.GroupVersionKind()]
	if !ok {
		// Karmada names the operation here, not the GVK.
		return nil, errDependencyNotFound
	}
	deps, err := handler(obj)
	if err != nil {
		return nil, err
	}
	return deps, VerifyDependencies(deps)
}

// VerifyDependencies is Karmada's validation.VerifyDependencies: apiVersion
// and kind are required, and so is a name or a valid label selector.
func VerifyDependencies(deps []configv1alpha1.DependentObjectReference) error {
	var errs field.ErrorList
	for i, dep := range deps {
		path := field.NewPath("dependencies").Index(i)
		if dep.APIVersion == "" {
			errs = append(errs, field.Required(path.Child("apiVersion"), "missing required apiVersion"))
		}
		if dep.Kind == "" {
			errs = append(errs, field.Required(path.Child("kind"), "missing required kind"))
		}
		if dep.Name == "" && dep.LabelSelector == nil {
			errs = append(errs, field.Invalid(path, dep, "dependency can not leave name and labelSelector all empty"))
		}
		if dep.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(dep.LabelSelector,
				metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
		}
	}
	return errs.ToAggregate()
}

func deploymentDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	d := &appsv1.Deployment{}
	if err := fromUnstructured(obj.Object, d); err != nil {
		return nil, err
	}
	return PodDependencies(&d.Spec.Template.Spec, obj.GetNamespace()), nil
}

func replicaSetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	rs := &appsv1.ReplicaSet{}
	if err := fromUnstructured(obj.Object, rs); err != nil {
		return nil, err
	}
	return PodDependencies(&rs.Spec.Template.Spec, obj.GetNamespace()), nil
}

func daemonSetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	ds := &appsv1.DaemonSet{}
	if err := fromUnstructured(obj.Object, ds); err != nil {
		return nil, err
	}
	return PodDependencies(&ds.Spec.Template.Spec, obj.GetNamespace()), nil
}

func jobDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	job := &batchv1.Job{}
	if err := fromUnstructured(obj.Object, job); err != nil {
		return nil, err
	}
	return PodDependencies(&job.Spec.Template.Spec, obj.GetNamespace()), nil
}

func cronJobDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	cj := &batchv1.CronJob{}
	if err := fromUnstructured(obj.Object, cj); err != nil {
		return nil, err
	}
	return PodDependencies(&cj.Spec.JobTemplate.Spec.Template.Spec, obj.GetNamespace()), nil
}

func podDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	pod := &corev1.Pod{}
	if err := fromUnstructured(obj.Object, pod); err != nil {
		return nil, err
	}
	return PodDependencies(&pod.Spec, obj.GetNamespace()), nil
}

// statefulSetDependencies leaves out the PVCs the StatefulSet creates from
// its volumeClaimTemplates.
func statefulSetDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	sts := &appsv1.StatefulSet{}
	if err := fromUnstructured(obj.Object, sts); err != nil {
		return nil, err
	}
	templates := map[string]bool{}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		templates[t.Name] = true
	}
	var deps []configv1alpha1.DependentObjectReference
	for _, dep := range PodDependencies(&sts.Spec.Template.Spec, obj.GetNamespace()) {
		if dep.Kind == kindPVC && templates[dep.Name] {
			continue
		}
		deps = append(deps, dep)
	}
	return deps, nil
}

// ingressDependencies: one Secret per TLS entry, duplicates kept.
func ingressDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	ing := &networkingv1.Ingress{}
	if err := fromUnstructured(obj.Object, ing); err != nil {
		return nil, err
	}
	var deps []configv1alpha1.DependentObjectReference
	for _, tls := range ing.Spec.TLS {
		deps = append(deps, configv1alpha1.DependentObjectReference{
			APIVersion: "v1", Kind: kindSecret, Namespace: ing.Namespace, Name: tls.SecretName,
		})
	}
	return deps, nil
}

// serviceImportDependencies: the derived Service and its EndpointSlices.
func serviceImportDependencies(obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	derived := "derived-" + obj.GetName()
	return []configv1alpha1.DependentObjectReference{
		{APIVersion: "v1", Kind: "Service", Namespace: obj.GetNamespace(), Name: derived},
		{
			APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice", Namespace: obj.GetNamespace(),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/service-name": derived}},
		},
	}, nil
}
