package native

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// resources is Karmada's util.Resource: the pod-level resources the
// scheduler counts, in their base units (cpu in millicores).
type resources struct {
	milliCPU         int64
	memory           int64
	ephemeralStorage int64
	pods             int64
	// scalar holds extended, hugepages, prefixed-native and attachable
	// volume resources; other names are dropped.
	scalar map[corev1.ResourceName]int64
}

// podRequests sums a pod's requests the Karmada way: containers are added,
// each init container raises the total to its own request per resource,
// then the overhead is added. A request missing for a resource that has a
// limit defaults to the limit.
func podRequests(spec *corev1.PodSpec) *resources {
	r := &resources{}
	for i := range spec.Containers {
		r.add(requestsWithLimits(&spec.Containers[i].Resources))
	}
	for i := range spec.InitContainers {
		r.setMax(requestsWithLimits(&spec.InitContainers[i].Resources))
	}
	r.add(spec.Overhead)
	return r
}

// requestsWithLimits returns the requests, with limits filling missing keys.
func requestsWithLimits(rr *corev1.ResourceRequirements) corev1.ResourceList {
	if len(rr.Limits) == 0 {
		return rr.Requests
	}
	out := make(corev1.ResourceList, len(rr.Requests)+len(rr.Limits))
	for name, q := range rr.Limits {
		out[name] = q
	}
	for name, q := range rr.Requests {
		out[name] = q
	}
	return out
}

func (r *resources) add(list corev1.ResourceList) {
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.ephemeralStorage += q.Value()
		case corev1.ResourcePods:
			r.pods += q.Value()
		default:
			if isScalarResourceName(name) {
				r.setScalar(name, r.scalar[name]+q.Value())
			}
		}
	}
}

func (r *resources) setMax(list corev1.ResourceList) {
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			r.milliCPU = max(r.milliCPU, q.MilliValue())
		case corev1.ResourceMemory:
			r.memory = max(r.memory, q.Value())
		case corev1.ResourceEphemeralStorage:
			r.ephemeralStorage = max(r.ephemeralStorage, q.Value())
		case corev1.ResourcePods:
			r.pods = max(r.pods, q.Value())
		default:
			if isScalarResourceName(name) && q.Value() > r.scalar[name] {
				r.setScalar(name, q.Value())
			}
		}
	}
}

func (r *resources) setScalar(name corev1.ResourceName, v int64) {
	if r.scalar == nil {
		r.scalar = map[corev1.ResourceName]int64{}
	}
	r.scalar[name] = v
}

// list renders the positive totals; nil when there are none.
func (r *resources) list() corev1.ResourceList {
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
		if isHugePageResourceName(name) {
			format = resource.BinarySI
		}
		out[name] = *resource.NewQuantity(v, format)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isScalarResourceName is Kubernetes' v1helper.IsScalarResourceName.
func isScalarResourceName(name corev1.ResourceName) bool {
	return isExtendedResourceName(name) || isHugePageResourceName(name) ||
		isPrefixedNativeResource(name) || strings.HasPrefix(string(name), corev1.ResourceAttachableVolumesPrefix)
}

// isExtendedResourceName: a domain-prefixed name outside kubernetes.io that
// is valid as a quota name ("requests.<name>").
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || isPrefixedNativeResource(name)
}

func isPrefixedNativeResource(name corev1.ResourceName) bool {
	return strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
