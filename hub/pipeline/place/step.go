package place

import (
	"errors"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

// Options tune Step.
type Options struct {
	// EvictionTimeout is the default grace period of eviction tasks.
	EvictionTimeout time.Duration
	// EmptyWorkloads is placement.Input.EnableEmptyWorkloadPropagation.
	EmptyWorkloads bool
	// FailoverUnreachable makes every Divided binding fail over from an
	// unreachable cluster, as if its policy set spec.failover.cluster.
	FailoverUnreachable bool
	// UnreachableToleration is how long the default tolerations tolerate
	// the unreachable and not-ready NoExecute taints; zero:
	// DefaultUnreachableToleration.
	UnreachableToleration time.Duration
	// Full are the clusters that hold as many works as the hub serves to
	// one cluster: no new placement goes there.
	Full map[string]bool
	// UnhealthySince is, for the binding Step looks at, when each target
	// cluster's application was first seen Unhealthy (ApplicationEvictions),
	// used when the binding has no AnnotationUnhealthySince; the loop keeps
	// Outcome.UnhealthySince for the next Step. Step records it on the
	// binding, so that another leader continues it.
	UnhealthySince map[string]time.Time
}

// DefaultUnreachableToleration is the tolerationSeconds of the default
// tolerations (Karmada's --default-unreachable-toleration-seconds=300).
const DefaultUnreachableToleration = 300 * time.Second

func (o Options) unreachableToleration() time.Duration {
	if o.UnreachableToleration <= 0 {
		return DefaultUnreachableToleration
	}
	return o.UnreachableToleration
}

// Outcome is what Step decided for one binding.
type Outcome struct {
	// Binding is what to store: the input itself when the loop has nothing
	// to change, else a modified copy (compare the encodings to decide
	// whether to write).
	Binding *workv1alpha1.ResourceBinding
	// placement.Reason is why it was scheduled; placement.ReasonNone when it was not.
	Reason placement.Reason
	// Evicted are the clusters the taint manager took it off.
	Evicted []Eviction
	// AppEvicted are the clusters the application failover took it off.
	AppEvicted []string
	// UnhealthySince is the application failover's memory to pass to the
	// next Step of this binding (Options.UnhealthySince).
	UnhealthySince map[string]time.Time
	// Returned are the clusters whose eviction was called off because
	// they are back (Returned).
	Returned []string
	// Err is the scheduling error (also in the Scheduled condition).
	Err error
	// Recheck is when to look at the binding again although nothing
	// changes (a toleration or a grace period runs out); zero for never.
	Recheck time.Time
}

// Step is the whole decision for one binding, pure: evictions called off
// for clusters that are back, the taint manager, the application failover,
// a rebalance in progress finished or called off (AnnotationRebalance),
// then the §3 decision and the scheduler (a triggered reschedule that
// takes replicas off a cluster starts a rebalance), then the graceful
// eviction controller.
func Step(b *workv1alpha1.ResourceBinding, members []Member, now time.Time, opts Options) Outcome {
	return StepIndexed(b, members, IndexMembers(members), now, opts)
}

// StepIndexed is Step with the members' index (the loop builds it once per
// snapshot, not once per binding).
func StepIndexed(b *workv1alpha1.ResourceBinding, members []Member, byName MemberIndex, now time.Time, opts Options) Outcome {
	if !placement.Managed(b) {
		return Outcome{Binding: b}
	}
	lookup, exists := byName.lookup, byName.Exists

	nb := CloneBinding(b)
	out := Outcome{Returned: Returned(nb, lookup, now, opts)}
	evictions, recheck := TaintEvictions(nb, lookup, now, opts)
	for _, ev := range evictions {
		evict(&nb.Spec, ev, now)
	}
	out.Evicted = evictions
	outOfContact := func(name string) bool { m, ok := byName[name]; return !ok || notReady(m) }
	appEvicted, since, appRecheck := ApplicationEvictions(nb, unhealthySince(nb, opts.UnhealthySince), now, outOfContact)
	for _, c := range appEvicted {
		evictApplication(&nb.Spec, c, now)
	}
	recordUnhealthy(nb, since)
	out.AppEvicted, out.UnhealthySince = appEvicted, since
	recheck = Earliest(recheck, appRecheck)
	changed := len(evictions)+len(appEvicted)+len(out.Returned) > 0
	moveRecheck, moving := settle(nb, changed, Rebalancing(nb) && isScheduled(nb) && allHealthy(nb), now, opts.EvictionTimeout)
	recheck = Earliest(recheck, moveRecheck)
	if !moving { // a move holds more replicas than spec.replicas on purpose
		out.Reason = placement.NeedsSchedule(nb, exists)
	}
	scheduled := out.Reason == placement.ReasonNone && isScheduled(nb)
	if out.Reason != placement.ReasonNone {
		pre := nb
		nb, out.Err = schedule(nb, members, out.Reason, changed, now, opts)
		scheduled = out.Err == nil
		if scheduled && out.Reason == placement.ReasonRescheduleTriggered {
			surge(pre, nb, now)
		}
	}
	out.Returned = keepDropped(b, nb, out.Returned, now)
	// A target whose assignment this step changed has an aggregated status
	// item about its previous assignment, not about the replacement: the
	// tasks wait for the next look (hub/aggregate then reports it as
	// Unknown until the new version's status comes).
	away := func(name string) bool { m, ok := byName[name]; return ok && notReady(m) }
	taskRecheck := AssessTasks(nb, scheduled && !assignmentsChanged(b, nb), now, opts.EvictionTimeout, away)
	pruneEvictionRejections(nb, b.Spec.GracefulEvictionTasks)
	out.Binding = nb
	out.Recheck = Earliest(recheck, taskRecheck)
	return out
}

func isScheduled(b *workv1alpha1.ResourceBinding) bool {
	return meta.IsStatusConditionTrue(b.Status.Conditions, placement.ConditionScheduled)
}

// assignmentsChanged reports whether nb targets a cluster that b did not,
// or with other replicas.
func assignmentsChanged(b, nb *workv1alpha1.ResourceBinding) bool {
	before := make(map[string]int32, len(b.Spec.Clusters))
	for _, t := range b.Spec.Clusters {
		before[t.Name] = t.Replicas
	}
	for _, t := range nb.Spec.Clusters {
		if r, ok := before[t.Name]; !ok || r != t.Replicas {
			return true
		}
	}
	return false
}

// schedule runs the scheduler and records its result. A result that
// changes nothing that matters (targets, applied placement, observed term,
// condition) leaves the binding as it was, unless changed says the binding
// changed already or the reschedule was asked for, so that re-evaluations
// (a Duplicated binding on every cluster change, a restarted loop) write
// nothing; rejections are refreshed only with a decision that is written.
func schedule(b *workv1alpha1.ResourceBinding, members []Member, reason placement.Reason, changed bool, now time.Time, opts Options) (*workv1alpha1.ResourceBinding, error) {
	res, err := placement.Schedule(BuildInput(b, members, opts))
	nb := CloneBinding(b)
	record(nb, res, err, now)
	if reason != placement.ReasonRescheduleTriggered && !changed && !meaningfulChange(b, nb) {
		return b, err
	}
	if nb.Annotations == nil {
		nb.Annotations = map[string]string{}
	}
	rejected := res.Rejected
	var fit *placement.FitError
	if errors.As(err, &fit) {
		rejected = fit.Rejected
	}
	if len(rejected) == 0 {
		delete(nb.Annotations, placement.AnnotationRejections)
	} else {
		nb.Annotations[placement.AnnotationRejections] = JSONString(rejections(rejected))
	}
	if err == nil || fit != nil {
		last := now
		if at := nb.Spec.RescheduleTriggeredAt; at != nil && at.After(last) {
			last = at.Time // never leave the trigger pending
		}
		nb.Status.LastScheduledTime = &metav1.Time{Time: last}
		nb.Status.SchedulerObservedGeneration = nb.Generation
	}
	return nb, err
}

// record writes the scheduler's answer into b (spec §4.10): a result
// replaces the targets; a FitError clears them; other errors keep them.
// The applied placement is recorded for a result and for a FitError.
func record(b *workv1alpha1.ResourceBinding, res placement.Result, err error, now time.Time) {
	cond := metav1.Condition{Type: placement.ConditionScheduled, ObservedGeneration: b.Generation, LastTransitionTime: metav1.Time{Time: now}}
	var fit *placement.FitError
	var unsched *placement.UnschedulableError
	switch {
	case errors.As(err, &fit):
		b.Spec.Clusters = nil
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, placement.ReasonNoClusterFit, err.Error()
	case errors.As(err, &unsched):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, placement.ReasonUnschedulable, err.Error()
	case err != nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, placement.ReasonSchedulerError, err.Error()
	default:
		b.Spec.Clusters = targets(res.Clusters)
		b.Status.SchedulerObservedAffinityName = res.ObservedAffinityName
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, placement.ReasonSuccess, MessageScheduled
	}
	if err == nil || fit != nil {
		if b.Annotations == nil {
			b.Annotations = map[string]string{}
		}
		b.Annotations[placement.AnnotationAppliedPlacement] = JSONString(b.Spec.Placement)
	}
	meta.SetStatusCondition(&b.Status.Conditions, cond)
}

// meaningfulChange compares what a scheduling decision writes, leaving
// out times and rejections.
func meaningfulChange(old, cur *workv1alpha1.ResourceBinding) bool {
	if JSONString(old.Spec.Clusters) != JSONString(cur.Spec.Clusters) ||
		old.Annotations[placement.AnnotationAppliedPlacement] != cur.Annotations[placement.AnnotationAppliedPlacement] ||
		old.Status.SchedulerObservedAffinityName != cur.Status.SchedulerObservedAffinityName {
		return true
	}
	a := meta.FindStatusCondition(old.Status.Conditions, placement.ConditionScheduled)
	c := meta.FindStatusCondition(cur.Status.Conditions, placement.ConditionScheduled)
	return a == nil || a.Status != c.Status || a.Reason != c.Reason || a.Message != c.Message
}

// targets converts a result, sorted by name so that the same set always
// encodes the same.
func targets(in []placement.TargetCluster) []workv1alpha1.TargetCluster {
	if len(in) == 0 {
		return nil
	}
	out := make([]workv1alpha1.TargetCluster, len(in))
	for i, t := range in {
		out[i] = workv1alpha1.TargetCluster{Name: t.Name, Replicas: t.Replicas}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rejections is a copy of in sorted by cluster name, so that the same
// set always encodes the same; the scheduler's result is left as it is.
func rejections(in []placement.Rejection) []placement.Rejection {
	out := make([]placement.Rejection, len(in))
	copy(out, in)
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// Earliest is the earlier non-zero time.
func Earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
