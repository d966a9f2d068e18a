package native

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// RetainReplicasLabel on a desired Deployment keeps the member cluster's
// spec.replicas (for example when a member HPA scales it).
const (
	RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"
	retainReplicasValue = "true"
)

type retainFunc func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)

var retainHandlers = map[schema.GroupVersionKind]retainFunc{
	deploymentGVK:  retainDeploymentReplicas,
	podGVK:         retainPod,
	serviceGVK:     retainService,
	serviceAcctGVK: retainServiceAccount,
	pvcGVK:         retainPVC,
	pvGVK:          retainPV,
	jobGVK:         retainJob,
	secretGVK:      retainSecret,
}

// Retain returns desired with the fields the member cluster owns copied from
// observed. Most handlers modify desired in place.
func (*Interpreter) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	handler, ok := retainHandlers[desired.GroupVersionKind()]
	if !ok {
		return nil, notFound(configv1alpha1.InterpreterOperationRetain, desired.GroupVersionKind())
	}
	return handler(desired, observed)
}

// retainDeploymentReplicas keeps observed spec.replicas when desired has the
// retain-replicas label.
func retainDeploymentReplicas(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	labels, _, err := unstructured.NestedStringMap(desired.Object, "metadata", "labels")
	if err != nil {
		return nil, fmt.Errorf("failed to get metadata.label from desired.Object: %+v", err)
	}
	if labels[RetainReplicasLabel] != retainReplicasValue {
		return desired, nil
	}
	replicas, ok, err := unstructured.NestedInt64(observed.Object, "spec", "replicas")
	if err != nil || !ok {
		return nil, fmt.Errorf("failed to get spec.replicas from %s %s/%s", observed.GetKind(), observed.GetNamespace(), observed.GetName())
	}
	if err := unstructured.SetNestedField(desired.Object, replicas, "spec", "replicas"); err != nil {
		return nil, fmt.Errorf("failed to set spec.replicas to %s %s/%s", desired.GetKind(), desired.GetNamespace(), desired.GetName())
	}
	return desired, nil
}

// retainPod keeps what the member's scheduler and admission set: nodeName,
// serviceAccountName, volumes and the volumeMounts of containers matched by
// name. The result is a typed round trip.
func retainPod(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	want, got := &corev1.Pod{}, &corev1.Pod{}
	if err := fromUnstructured(desired.Object, want); err != nil {
		return nil, err
	}
	if err := fromUnstructured(observed.Object, got); err != nil {
		return nil, err
	}
	want.Spec.NodeName = got.Spec.NodeName
	want.Spec.ServiceAccountName = got.Spec.ServiceAccountName
	want.Spec.Volumes = got.Spec.Volumes
	retainVolumeMounts(want.Spec.Containers, got.Spec.Containers)
	retainVolumeMounts(want.Spec.InitContainers, got.Spec.InitContainers)
	return toUnstructured(want)
}

func retainVolumeMounts(desired, observed []corev1.Container) {
	for _, o := range observed {
		for i := range desired {
			if desired[i].Name == o.Name {
				desired[i].VolumeMounts = o.VolumeMounts
				break
			}
		}
	}
}

// retainService keeps the allocated healthCheckNodePort and clusterIP.
func retainService(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	port, ok, err := unstructured.NestedInt64(observed.Object, "spec", "healthCheckNodePort")
	if err != nil {
		return nil, fmt.Errorf("error retrieving healthCheckNodePort from cluster Service: %w", err)
	}
	if ok && port > 0 {
		if err := unstructured.SetNestedField(desired.Object, port, "spec", "healthCheckNodePort"); err != nil {
			return nil, fmt.Errorf("error setting healthCheckNodePort for service: %w", err)
		}
	}
	ip, ok, err := unstructured.NestedString(observed.Object, "spec", "clusterIP")
	if err != nil {
		return nil, fmt.Errorf("error retrieving clusterIP from cluster service: %w", err)
	}
	if ok && ip != "" {
		if err := unstructured.SetNestedField(desired.Object, ip, "spec", "clusterIP"); err != nil {
			return nil, fmt.Errorf("error setting clusterIP for service: %w", err)
		}
	}
	return desired, nil
}

// retainServiceAccount merges secrets and imagePullSecrets: desired entries
// first, then observed entries with names desired lacks. When both sides are
// empty the field is written as null.
func retainServiceAccount(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, field := range []string{"secrets", "imagePullSecrets"} {
		want, _, err := unstructured.NestedSlice(desired.Object, field)
		if err != nil {
			return nil, fmt.Errorf("error retrieving %s from desired: %w", field, err)
		}
		got, _, err := unstructured.NestedSlice(observed.Object, field)
		if err != nil {
			return nil, fmt.Errorf("error retrieving %s from observed: %w", field, err)
		}
		if err := unstructured.SetNestedSlice(desired.Object, mergeByName(want, got), field); err != nil {
			return nil, fmt.Errorf("error setting %s: %w", field, err)
		}
	}
	return desired, nil
}

// mergeByName returns desired plus the observed entries whose name is new;
// nil when both are empty.
func mergeByName(desired, observed []any) []any {
	var merged []any
	names := map[string]bool{}
	for _, e := range desired {
		names[entryName(e)] = true
		merged = append(merged, e)
	}
	for _, e := range observed {
		if !names[entryName(e)] {
			names[entryName(e)] = true
			merged = append(merged, e)
		}
	}
	return merged
}

func entryName(e any) string {
	m, _ := e.(map[string]any)
	name, _ := m["name"].(string)
	return name
}

// retainPVC keeps the bound volume name.
func retainPVC(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	name, ok, err := unstructured.NestedString(observed.Object, "spec", "volumeName")
	if err != nil {
		return nil, err
	}
	if ok && name != "" {
		if err := unstructured.SetNestedField(desired.Object, name, "spec", "volumeName"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainPV keeps the claim the volume is bound to.
func retainPV(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ref, ok, err := unstructured.NestedFieldCopy(observed.Object, "spec", "claimRef")
	if err != nil {
		return nil, err
	}
	if ok {
		if err := unstructured.SetNestedField(desired.Object, ref, "spec", "claimRef"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainJob keeps the selector and template labels the member's job
// controller generated (controller-uid and friends).
func retainJob(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for _, path := range [][]string{{"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
		labels, ok, err := unstructured.NestedStringMap(observed.Object, path...)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := unstructured.SetNestedStringMap(desired.Object, labels, path...); err != nil {
			return nil, err
		}
	}
	return desired, nil
}

// retainSecret keeps the token data of a service-account-token Secret,
// which the member's token controller fills.
func retainSecret(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	typ, _, _ := unstructured.NestedString(desired.Object, "type")
	if typ != string(corev1.SecretTypeServiceAccountToken) {
		return desired, nil
	}
	data, ok, err := unstructured.NestedFieldCopy(observed.Object, "data")
	if err != nil {
		return nil, err
	}
	if ok {
		if err := unstructured.SetNestedField(desired.Object, data, "data"); err != nil {
			return nil, err
		}
	}
	return desired, nil
}
