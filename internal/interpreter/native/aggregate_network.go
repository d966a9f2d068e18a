package native

import (
	"cmp"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// aggregateService gathers the load balancer entries of every member of a
// LoadBalancer Service; other types are returned unchanged.
func aggregateService(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	svc := &corev1.Service{}
	if err := fromUnstructured(obj.Object, svc); err != nil {
		return nil, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return obj, nil
	}
	var all []corev1.LoadBalancerIngress
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *corev1.ServiceStatus) {
		all = append(all, s.LoadBalancer.Ingress...)
	})
	if err != nil {
		return nil, err
	}
	status := corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: mergeServiceIngress(all)}}
	if reflect.DeepEqual(svc.Status, status) {
		return obj, nil
	}
	svc.Status = status
	return toUnstructured(svc)
}

// mergeServiceIngress dedups entries by (hostname, ip, ipMode), merging
// their ports, and sorts them: hostnames first, then by ip, then ipMode.
func mergeServiceIngress(all []corev1.LoadBalancerIngress) []corev1.LoadBalancerIngress {
	type key struct{ hostname, ip, ipMode string }
	var merged []corev1.LoadBalancerIngress
	index := map[key]int{}
	for _, ing := range all {
		k := key{ing.Hostname, ing.IP, ptrString(ing.IPMode)}
		if i, ok := index[k]; ok {
			merged[i].Ports = mergePorts(merged[i].Ports, ing.Ports)
			continue
		}
		index[k] = len(merged)
		ing.Ports = mergePorts(nil, ing.Ports)
		merged = append(merged, ing)
	}
	slices.SortStableFunc(merged, func(a, b corev1.LoadBalancerIngress) int {
		if c := compareHostIP(a.Hostname, a.IP, b.Hostname, b.IP); c != 0 {
			return c
		}
		return compareOptional(a.IPMode, b.IPMode)
	})
	return merged
}

// compareHostIP orders entries with a hostname first, then by hostname,
// then by ip.
func compareHostIP(hostA, ipA, hostB, ipB string) int {
	if (hostA != "") != (hostB != "") {
		if hostA != "" {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(hostA, hostB), cmp.Compare(ipA, ipB))
}

// compareOptional orders nil after any value.
func compareOptional[T ~string](a, b *T) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

func ptrString[T ~string](p *T) string {
	if p == nil {
		return "\x00nil"
	}
	return string(*p)
}

// mergePorts adds the ports of add missing from have, sorted by (port,
// protocol, error).
func mergePorts(have, add []corev1.PortStatus) []corev1.PortStatus {
	for _, p := range add {
		if !slices.ContainsFunc(have, func(h corev1.PortStatus) bool { return equalPort(h, p) }) {
			have = append(have, p)
		}
	}
	slices.SortStableFunc(have, func(a, b corev1.PortStatus) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol), compareOptionalFirst(a.Error, b.Error))
	})
	return have
}

func equalPort(a, b corev1.PortStatus) bool {
	return a.Port == b.Port && a.Protocol == b.Protocol && ptrString(a.Error) == ptrString(b.Error)
}

// compareOptionalFirst orders nil before any value.
func compareOptionalFirst(a, b *string) int {
	if a == nil || b == nil {
		return -compareOptional(a, b)
	}
	return cmp.Compare(*a, *b)
}

// aggregateIngress gathers the load balancer entries of every member,
// deduplicated by (hostname, ip) with ports merged, hostnames first.
func aggregateIngress(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	ing := &networkingv1.Ingress{}
	if err := fromUnstructured(obj.Object, ing); err != nil {
		return nil, err
	}
	var all []networkingv1.IngressLoadBalancerIngress
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, s *networkingv1.IngressStatus) {
		all = append(all, s.LoadBalancer.Ingress...)
	})
	if err != nil {
		return nil, err
	}
	status := networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: mergeIngressLB(all)}}
	if reflect.DeepEqual(ing.Status, status) {
		return obj, nil
	}
	ing.Status = status
	return toUnstructured(ing)
}

func mergeIngressLB(all []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	type key struct{ hostname, ip string }
	var merged []networkingv1.IngressLoadBalancerIngress
	index := map[key]int{}
	for _, e := range all {
		k := key{e.Hostname, e.IP}
		if i, ok := index[k]; ok {
			merged[i].Ports = mergeIngressPorts(merged[i].Ports, e.Ports)
			continue
		}
		index[k] = len(merged)
		e.Ports = mergeIngressPorts(nil, e.Ports)
		merged = append(merged, e)
	}
	slices.SortStableFunc(merged, func(a, b networkingv1.IngressLoadBalancerIngress) int {
		return compareHostIP(a.Hostname, a.IP, b.Hostname, b.IP)
	})
	return merged
}

func mergeIngressPorts(have, add []networkingv1.IngressPortStatus) []networkingv1.IngressPortStatus {
	for _, p := range add {
		if !slices.ContainsFunc(have, func(h networkingv1.IngressPortStatus) bool {
			return h.Port == p.Port && h.Protocol == p.Protocol && ptrString(h.Error) == ptrString(p.Error)
		}) {
			have = append(have, p)
		}
	}
	slices.SortStableFunc(have, func(a, b networkingv1.IngressPortStatus) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol), compareOptionalFirst(a.Error, b.Error))
	})
	return have
}
