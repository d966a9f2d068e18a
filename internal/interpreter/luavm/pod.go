package luavm

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Pod-template helpers behind the kube module, with Karmada's semantics
// (pkg/util/helper/binding.go GenerateReplicaRequirements, pkg/util/resource.go,
// pkg/util/helper/pod.go GetDependenciesFromPodTemplate).

// replicaRequirements is GenerateReplicaRequirements: nil when there is
// neither a node claim nor a resource request.
func replicaRequirements(tmpl *corev1.PodTemplateSpec, resourceQuotaEstimate bool) *configv1alpha1.ReplicaRequirements {
	claim := nodeClaim(&tmpl.Spec)
	req := podRequest(&tmpl.Spec)
	if claim == nil && req == nil {
		return nil
	}
	out := &configv1alpha1.ReplicaRequirements{NodeClaim: claim, ResourceRequest: req}
	if resourceQuotaEstimate {
		out.Namespace = tmpl.Namespace
		out.PriorityClassName = tmpl.Spec.PriorityClassName
	}
	return out
}

func nodeClaim(spec *corev1.PodSpec) *configv1alpha1.NodeClaim {
	claim := &configv1alpha1.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if claim.NodeSelector == nil && claim.HardNodeAffinity == nil && len(claim.Tolerations) == 0 {
		return nil
	}
	return claim
}

// podResource is Karmada's util.Resource.
type podResource struct {
	milliCPU, memory, ephemeralStorage, pods int64
	scalar                                   map[corev1.ResourceName]int64
}

// podRequest sums container requests (missing requests default to limits),
// takes the per-resource max with each init container, and adds overhead.
func podRequest(spec *corev1.PodSpec) corev1.ResourceList {
	r := &podResource{}
	for _, c := range spec.Containers {
		r.apply(requestsWithLimits(c.Resources), false)
	}
	for _, c := range spec.InitContainers {
		r.apply(requestsWithLimits(c.Resources), true)
	}
	if spec.Overhead != nil {
		r.apply(spec.Overhead, false)
	}
	return r.list()
}

func requestsWithLimits(res corev1.ResourceRequirements) corev1.ResourceList {
	if len(res.Limits) == 0 {
		return res.Requests
	}
	out := corev1.ResourceList{}
	for k, v := range res.Limits {
		out[k] = v
	}
	for k, v := range res.Requests {
		out[k] = v
	}
	return out
}

// apply adds rl to r, or with max set takes the per-resource maximum.
func (r *podResource) apply(rl corev1.ResourceList, max bool) {
	set := func(cur *int64, v int64) {
		if !max {
			*cur += v
		} else if v > *cur {
			*cur = v
		}
	}
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			set(&r.milliCPU, q.MilliValue())
		case corev1.ResourceMemory:
			set(&r.memory, q.Value())
		case corev1.ResourceEphemeralStorage:
			set(&r.ephemeralStorage, q.Value())
		case corev1.ResourcePods:
			set(&r.pods, q.Value())
		default:
			if isScalarResourceName(name) {
				if r.scalar == nil {
					r.scalar = map[corev1.ResourceName]int64{}
				}
				v := r.scalar[name]
				set(&v, q.Value())
				r.scalar[name] = v
			}
		}
	}
}

func (r *podResource) list() corev1.ResourceList {
	out := corev1.ResourceList{}
	if r.milliCPU > 0 {
		out[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.milliCPU, resource.DecimalSI)
	}
	if r.memory > 0 {
		out[corev1.ResourceMemory] = *resource.NewQuantity(r.memory, resource.BinarySI)
	}
	if r.ephemeralStorage > 0 {
		out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.ephemeralStorage, resource.BinarySI)
	}
	if r.pods > 0 {
		out[corev1.ResourcePods] = *resource.NewQuantity(r.pods, resource.DecimalSI)
	}
	for name, v := range r.scalar {
		if v <= 0 {
			continue
		}
		format := resource.DecimalSI
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			format = resource.BinarySI
		}
		out[name] = *resource.NewQuantity(v, format)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isScalarResourceName: extended, hugepages, prefixed native or attachable volume.
func isScalarResourceName(name corev1.ResourceName) bool {
	s := string(name)
	return isExtendedResourceName(s) || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
		strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix)
}

func isExtendedResourceName(s string) bool {
	native := !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
	if native || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}

// podDependencies lists the ConfigMaps, Secrets, ServiceAccount and PVCs a
// pod spec uses, each group sorted by name (Karmada's order inside a group is
// random); nil when there are none.
func podDependencies(spec *corev1.PodSpec, namespace string) []configv1alpha1.DependentObjectReference {
	cms, secrets, pvcs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	add := func(m map[string]bool, name string) {
		if name != "" {
			m[name] = true
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add(secrets, s.Name)
	}
	visitContainers(spec, func(c envSource) {
		for _, e := range c.envFrom {
			if e.ConfigMapRef != nil {
				add(cms, e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add(secrets, e.SecretRef.Name)
			}
		}
		for _, e := range c.env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(cms, e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(secrets, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for _, v := range spec.Volumes {
		volumeDependencies(v, func(n string) { add(cms, n) }, func(n string) { add(secrets, n) })
		if v.PersistentVolumeClaim != nil {
			add(pvcs, v.PersistentVolumeClaim.ClaimName)
		}
	}
	var out []configv1alpha1.DependentObjectReference
	emit := func(kind string, names map[string]bool) {
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			out = append(out, configv1alpha1.DependentObjectReference{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: n})
		}
	}
	emit("ConfigMap", cms)
	emit("Secret", secrets)
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" {
		emit("ServiceAccount", map[string]bool{sa: true})
	}
	emit("PersistentVolumeClaim", pvcs)
	return out
}

type envSource struct {
	envFrom []corev1.EnvFromSource
	env     []corev1.EnvVar
}

func visitContainers(spec *corev1.PodSpec, visit func(envSource)) {
	for _, c := range spec.InitContainers {
		visit(envSource{c.EnvFrom, c.Env})
	}
	for _, c := range spec.Containers {
		visit(envSource{c.EnvFrom, c.Env})
	}
	for _, c := range spec.EphemeralContainers {
		visit(envSource{c.EnvFrom, c.Env})
	}
}

func volumeDependencies(v corev1.Volume, cm, secret func(string)) {
	src := v.VolumeSource
	if src.ConfigMap != nil {
		cm(src.ConfigMap.Name)
	}
	if src.Projected != nil {
		for _, p := range src.Projected.Sources {
			if p.ConfigMap != nil {
				cm(p.ConfigMap.Name)
			}
			if p.Secret != nil {
				secret(p.Secret.Name)
			}
		}
	}
	if src.Secret != nil {
		secret(src.Secret.SecretName)
	}
	if src.AzureFile != nil {
		secret(src.AzureFile.SecretName)
	}
	refs := []*corev1.LocalObjectReference{}
	if src.CephFS != nil {
		refs = append(refs, src.CephFS.SecretRef)
	}
	if src.Cinder != nil {
		refs = append(refs, src.Cinder.SecretRef)
	}
	if src.FlexVolume != nil {
		refs = append(refs, src.FlexVolume.SecretRef)
	}
	if src.RBD != nil {
		refs = append(refs, src.RBD.SecretRef)
	}
	if src.ISCSI != nil {
		refs = append(refs, src.ISCSI.SecretRef)
	}
	if src.StorageOS != nil {
		refs = append(refs, src.StorageOS.SecretRef)
	}
	if src.CSI != nil {
		refs = append(refs, src.CSI.NodePublishSecretRef)
	}
	for _, r := range refs {
		if r != nil {
			secret(r.Name)
		}
	}
	if src.ScaleIO != nil && src.ScaleIO.SecretRef != nil {
		secret(src.ScaleIO.SecretRef.Name)
	}
}
