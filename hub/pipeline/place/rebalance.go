package place

import (
	"encoding/json"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// AnnotationRebalance holds, on a Divided binding whose triggered
// reschedule (a WorkloadRebalancer, hub/rebalancer) takes replicas off a
// cluster, the move in progress (Rebalance): until the clusters it adds
// replicas to are Healthy, every cluster keeps at least the replicas it
// had, so the ready replicas never drop below what was there. It is on
// the binding, not in the leader's memory, so that a new leader finishes
// the move.
const AnnotationRebalance = "scheduler.tether.io/rebalance"

// Rebalance is a move in progress.
type Rebalance struct {
	// From is the assignment before the reschedule, To the one it decided.
	From []workv1alpha1.TargetCluster `json:"from"`
	To   []workv1alpha1.TargetCluster `json:"to"`
	// Replicas is spec.replicas when it was decided.
	Replicas int32 `json:"replicas"`
	// Since is when it was decided; after the eviction timeout without the
	// new copies Healthy the move is called off (back to From).
	Since metav1.Time `json:"since"`
}

// Rebalancing reports whether b has a move in progress.
func Rebalancing(b *workv1alpha1.ResourceBinding) bool {
	_, ok := b.Annotations[AnnotationRebalance]
	return ok
}

// surge turns a triggered reschedule of a Divided binding that takes
// replicas off a cluster into a move: spec.clusters becomes each cluster's
// larger assignment of before (b) and after (nb), and the annotation
// records both. A reschedule that only adds replicas needs no move.
func surge(b, nb *workv1alpha1.ResourceBinding, now time.Time) {
	if !divided(nb) || !shrinks(b.Spec.Clusters, nb.Spec.Clusters) {
		return
	}
	mv := Rebalance{From: b.Spec.Clusters, To: nb.Spec.Clusters, Replicas: nb.Spec.Replicas, Since: metav1.Time{Time: now}}
	both := map[string]int32{}
	for _, t := range append(append([]workv1alpha1.TargetCluster(nil), mv.From...), mv.To...) {
		both[t.Name] = max(both[t.Name], t.Replicas)
	}
	out := make([]workv1alpha1.TargetCluster, 0, len(both))
	for name, r := range both {
		out = append(out, workv1alpha1.TargetCluster{Name: name, Replicas: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	nb.Spec.Clusters = out
	if nb.Annotations == nil {
		nb.Annotations = map[string]string{}
	}
	nb.Annotations[AnnotationRebalance] = JSONString(mv)
}

// settle finishes or calls off b's move, if it has one: when the binding
// changed under it (spec.replicas, or an eviction or return in this
// step), the move is dropped and the scheduler takes it from the targets
// as they are; when every target is Healthy (healthy, the graceful
// eviction rule), the targets become the move's To; after timeout the
// move is called off, back to From (the new copies never became
// Healthy; the old ones were there all along). It returns when to look
// again, and whether a move is still in progress.
func settle(b *workv1alpha1.ResourceBinding, changed, healthy bool, now time.Time, timeout time.Duration) (time.Time, bool) {
	raw, ok := b.Annotations[AnnotationRebalance]
	if !ok {
		return time.Time{}, false
	}
	var mv Rebalance
	if err := json.Unmarshal([]byte(raw), &mv); err != nil || changed || mv.Replicas != b.Spec.Replicas {
		delete(b.Annotations, AnnotationRebalance)
		return time.Time{}, false
	}
	if timeout <= 0 {
		timeout = DefaultGracefulEvictionTimeout
	}
	end := mv.Since.Add(timeout)
	switch {
	case healthy:
		b.Spec.Clusters = mv.To
	case now.After(end):
		b.Spec.Clusters = mv.From
	default:
		return end.Add(time.Millisecond), true
	}
	delete(b.Annotations, AnnotationRebalance)
	return time.Time{}, false
}

// shrinks reports whether after gives some cluster of before fewer
// replicas (none when it is left out).
func shrinks(before, after []workv1alpha1.TargetCluster) bool {
	now := make(map[string]int32, len(after))
	for _, t := range after {
		now[t.Name] = t.Replicas
	}
	for _, t := range before {
		if now[t.Name] < t.Replicas {
			return true
		}
	}
	return false
}

func divided(b *workv1alpha1.ResourceBinding) bool {
	p := b.Spec.Placement
	return b.Spec.Replicas > 0 && p != nil && p.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDivided
}
