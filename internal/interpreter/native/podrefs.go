package native

import (
	"errors"
	"sort"

	corev1 "k8s.io/api/core/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Kinds a pod can reference.
const (
	kindConfigMap      = "ConfigMap"
	kindSecret         = "Secret"
	kindServiceAccount = "ServiceAccount"
	kindPVC            = "PersistentVolumeClaim"
)

var errDependencyNotFound = errors.New("default interpreter for operation InterpretDependency not found")

// PodDependencies is Karmada's helper.GetDependenciesFromPodTemplate: the
// ConfigMaps, Secrets, non-default ServiceAccount and PVCs a pod spec
// references, in that group order, each in namespace. Karmada's order within
// a group is random; here it is sorted by name. No references give nil.
func PodDependencies(spec *corev1.PodSpec, namespace string) []configv1alpha1.DependentObjectReference {
	groups := []struct {
		kind  string
		names nameSet
	}{
		{kindConfigMap, configMapNames(spec)},
		{kindSecret, secretNames(spec)},
		{kindServiceAccount, serviceAccountNames(spec)},
		{kindPVC, pvcNames(spec)},
	}
	var deps []configv1alpha1.DependentObjectReference
	for _, g := range groups {
		for _, name := range sortedKeys(g.names) {
			deps = append(deps, configv1alpha1.DependentObjectReference{
				APIVersion: "v1", Kind: g.kind, Namespace: namespace, Name: name,
			})
		}
	}
	return deps
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nameSet collects non-empty names.
type nameSet map[string]bool

func (s nameSet) add(name string) {
	if name != "" {
		s[name] = true
	}
}

// eachContainer visits init, regular and ephemeral containers.
func eachContainer(spec *corev1.PodSpec, fn func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar)) {
	for _, c := range spec.InitContainers {
		fn(c.EnvFrom, c.Env)
	}
	for _, c := range spec.Containers {
		fn(c.EnvFrom, c.Env)
	}
	for _, c := range spec.EphemeralContainers {
		fn(c.EnvFrom, c.Env)
	}
}

func configMapNames(spec *corev1.PodSpec) nameSet {
	names := nameSet{}
	eachContainer(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				names.add(e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				names.add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			names.add(v.ConfigMap.Name)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					names.add(src.ConfigMap.Name)
				}
			}
		}
	}
	return names
}

func secretNames(spec *corev1.PodSpec) nameSet {
	names := nameSet{}
	for _, s := range spec.ImagePullSecrets {
		names.add(s.Name)
	}
	eachContainer(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				names.add(e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				names.add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		volumeSecretNames(&spec.Volumes[i], names)
	}
	return names
}

// volumeSecretNames adds the Secrets a volume source references.
func volumeSecretNames(v *corev1.Volume, names nameSet) {
	ref := func(r *corev1.LocalObjectReference) {
		if r != nil {
			names.add(r.Name)
		}
	}
	switch {
	case v.AzureFile != nil:
		names.add(v.AzureFile.SecretName)
	case v.CephFS != nil:
		ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		ref(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		ref(v.RBD.SecretRef)
	case v.Secret != nil:
		names.add(v.Secret.SecretName)
	case v.ScaleIO != nil:
		ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		ref(v.StorageOS.SecretRef)
	case v.CSI != nil:
		ref(v.CSI.NodePublishSecretRef)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.Secret != nil {
				names.add(src.Secret.Name)
			}
		}
	}
}

// serviceAccountNames: spec.serviceAccountName unless it is "default"; the
// deprecated serviceAccount field is ignored.
func serviceAccountNames(spec *corev1.PodSpec) nameSet {
	names := nameSet{}
	if spec.ServiceAccountName != "default" {
		names.add(spec.ServiceAccountName)
	}
	return names
}

func pvcNames(spec *corev1.PodSpec) nameSet {
	names := nameSet{}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			names.add(v.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}
