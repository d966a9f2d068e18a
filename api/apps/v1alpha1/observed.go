package v1alpha1

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncObserved is the status list a rebalancer's spec asks for, from the
// status it has, by Karmada's rules: a workload still in the spec keeps
// its result; one no longer in the spec stays only if it was Successful;
// one new in the spec is added pending (no result). The list is sorted by
// apiVersion, kind, namespace and name.
func SyncObserved(r *WorkloadRebalancer) []ObservedWorkload {
	want := make(map[ObjectReference]bool, len(r.Spec.Workloads))
	for _, w := range r.Spec.Workloads {
		want[w] = true
	}
	out := make([]ObservedWorkload, 0, len(want))
	for _, o := range r.Status.ObservedWorkloads {
		switch {
		case want[o.Workload]:
			out = append(out, o)
			delete(want, o.Workload)
		case o.Result == RebalanceSuccessful:
			out = append(out, o)
		}
	}
	for w := range want {
		out = append(out, ObservedWorkload{Workload: w})
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i].Workload, out[j].Workload) })
	return out
}

func less(a, b ObjectReference) bool {
	if a.APIVersion != b.APIVersion {
		return a.APIVersion < b.APIVersion
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// Pending reports whether a workload has no result yet.
func (o ObservedWorkload) Pending() bool { return o.Result == "" }

// ExpiresAt is when a finished rebalancer with a TTL is deleted; false
// when it has no TTL or has not finished.
func (r *WorkloadRebalancer) ExpiresAt() (metav1.Time, bool) {
	if r.Spec.TTLSecondsAfterFinished == nil || r.Status.FinishTime == nil {
		return metav1.Time{}, false
	}
	return metav1.NewTime(r.Status.FinishTime.Add(time.Duration(*r.Spec.TTLSecondsAfterFinished) * time.Second)), true
}
