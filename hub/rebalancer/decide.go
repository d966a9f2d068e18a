package rebalancer

import (
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// BindingKey is where the binding of a referenced workload is stored: the
// template's own reference under /tether/bindings/ (Karmada names the
// binding <name>-<kind> in the template's namespace; Tether keys it by the
// template).
func BindingKey(w appsv1alpha1.ObjectReference) string {
	gv, _ := schema.ParseGroupVersion(w.APIVersion) // validated at apply
	return store.BindingKey(store.ObjectRef{Group: gv.Group, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
}

// Lookup tells what the hub knows of a workload's binding: found is false
// when there is none, triggered is its spec.rescheduleTriggeredAt, and
// unknown is true when its stored value does not decode (it is retried,
// never reported missing).
type Lookup func(w appsv1alpha1.ObjectReference) (triggered *metav1.Time, found, unknown bool)

// Pass is what one look at a rebalancer decides: the status list with
// every result known without writing (Failed for a missing binding,
// Successful for a binding already triggered at or after the rebalancer's
// creation), the workloads whose binding must be triggered, and those left
// pending for another look (their binding does not decode).
type Pass struct {
	Observed []appsv1alpha1.ObservedWorkload
	// Trigger are indexes into Observed whose binding gets
	// spec.rescheduleTriggeredAt = the rebalancer's creationTimestamp; the
	// loop marks each Successful once written.
	Trigger []int
	// Unknown counts the workloads left pending because their binding is
	// unknown.
	Unknown int
}

// Decide is Karmada's triggerReschedule for one rebalancer, pure: the
// status list of SyncObserved, then for each workload without a result,
// Failed (ReferencedBindingNotFound) when it has no binding, else a
// trigger unless the binding was triggered at or after the rebalancer's
// creationTimestamp (so that a second look, by this leader or the next,
// writes nothing).
func Decide(r *appsv1alpha1.WorkloadRebalancer, lookup Lookup) Pass {
	p := Pass{Observed: appsv1alpha1.SyncObserved(r)}
	for i := range p.Observed {
		o := &p.Observed[i]
		if !o.Pending() {
			continue
		}
		at, found, unknown := lookup(o.Workload)
		switch {
		case unknown:
			p.Unknown++
		case !found:
			o.Result, o.Reason = appsv1alpha1.RebalanceFailed, appsv1alpha1.RebalanceObjectNotFound
		case NeedsTrigger(r.CreationTimestamp, at):
			p.Trigger = append(p.Trigger, i)
		default:
			o.Result = appsv1alpha1.RebalanceSuccessful
		}
	}
	return p
}

// NeedsTrigger is Karmada's needTriggerReschedule: the binding was never
// triggered, or was triggered before the rebalancer was created.
func NeedsTrigger(created metav1.Time, triggered *metav1.Time) bool {
	return triggered == nil || created.After(triggered.Time)
}

// TriggerAt is the spec.rescheduleTriggeredAt written for a rebalancer
// created at created on a binding last scheduled at last: created, as in
// Karmada, unless the binding was scheduled in that second or later. The
// scheduler reschedules only for a trigger later than its last schedule,
// and both times are stored to the second, so Karmada's value would then
// be ignored (a rebalancer applied in the second of a failover did
// nothing); the second after the last schedule is used instead.
func TriggerAt(created metav1.Time, last *metav1.Time) metav1.Time {
	if last == nil || created.After(last.Time) {
		return created
	}
	return metav1.NewTime(last.Time.Truncate(time.Second).Add(time.Second))
}

// Status is the rebalancer's status after a pass: observed (the results
// after the writes), observedGeneration, and finishTime, which is set to
// now when the status changed and nothing is left to retry (Karmada's
// rule), and kept otherwise. changed reports whether it differs from the
// stored status.
func Status(r *appsv1alpha1.WorkloadRebalancer, observed []appsv1alpha1.ObservedWorkload, retry int, now time.Time) (appsv1alpha1.WorkloadRebalancerStatus, bool) {
	s := appsv1alpha1.WorkloadRebalancerStatus{ObservedWorkloads: observed, ObservedGeneration: r.Generation, FinishTime: r.Status.FinishTime}
	if len(s.ObservedWorkloads) == 0 {
		s.ObservedWorkloads = nil
	}
	if reflect.DeepEqual(s, r.Status) {
		return s, false
	}
	if retry == 0 {
		s.FinishTime = &metav1.Time{Time: now.UTC().Truncate(time.Second)}
	}
	return s, true
}
