package place

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/placement"
)

// Eviction is one target cluster the taint manager takes a binding off.
type Eviction struct {
	Cluster string
	// Taint is the NoExecute taint that caused it.
	Taint corev1.Taint
}

// TaintEvictions is the taint manager (spec §6.2) for one binding: the
// target clusters with a NoExecute taint the placement does not tolerate,
// or tolerates only for tolerationSeconds that have run out since the
// taint's timeAdded. recheck is when a tolerated taint runs out next (zero
// when none will).
//
// The liveness taints (cluster.karmada.io/unreachable and not-ready, which
// the loop derives from leases) count only for a binding that fails over
// (FailsOver), and then with the default tolerations (Tolerations). Admin
// taints (a drain) count for every binding.
func TaintEvictions(b *workv1alpha1.ResourceBinding, member func(name string) (*Member, bool), now time.Time, opts Options) (out []Eviction, recheck time.Time) {
	failover := FailsOver(b, opts)
	tolerations := Tolerations(b.Spec.Placement.ClusterTolerations, opts)
	for _, t := range b.Spec.Clusters {
		m, ok := member(t.Name)
		if !ok {
			continue
		}
		taint, until := untolerated(evicting(m.Cluster.Taints, failover), tolerations, now)
		if taint != nil {
			out = append(out, Eviction{Cluster: t.Name, Taint: *taint})
			continue
		}
		if !until.IsZero() && (recheck.IsZero() || until.Before(recheck)) {
			recheck = until
		}
	}
	return out, recheck
}

// FailsOver reports whether b leaves a cluster that became unreachable: its
// policy asks for it (spec.failover.cluster) or Options.FailoverUnreachable
// turns it on for all, and b is Divided with replicas. Duplicated and
// non-workload bindings never do: nothing would replace what they remove.
func FailsOver(b *workv1alpha1.ResourceBinding, opts Options) bool {
	p := b.Spec.Placement
	if p == nil || b.Spec.Replicas == 0 || p.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return false
	}
	return opts.FailoverUnreachable || (b.Spec.Failover != nil && b.Spec.Failover.Cluster != nil)
}

// Tolerations are the placement's cluster tolerations plus Karmada's
// default ones (its webhook's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds): not-ready:NoExecute and
// unreachable:NoExecute for Options.UnreachableToleration (default 300 s),
// each added unless a toleration of the placement already tolerates it.
func Tolerations(placed []corev1.Toleration, opts Options) []corev1.Toleration {
	secs := int64(opts.unreachableToleration() / time.Second)
	out := slices.Clone(placed)
	for _, key := range []string{clusterv1alpha1.TaintClusterNotReady, clusterv1alpha1.TaintClusterUnreachable} {
		taint := corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}
		if slices.ContainsFunc(placed, func(t corev1.Toleration) bool { return placement.Tolerates(&t, &taint) }) {
			continue
		}
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs})
	}
	return out
}

// evicting is taints without the liveness NoExecute ones unless failover
// is on: for a binding that does not fail over they mean nothing.
func evicting(taints []corev1.Taint, failover bool) []corev1.Taint {
	if failover {
		return taints
	}
	out := make([]corev1.Taint, 0, len(taints))
	for _, t := range taints {
		if !livenessTaint(t.Key) || t.Effect != corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// livenessTaint reports whether key is one of the taints the loop derives from
// leases (members.go replaces any stored taint of these keys).
func livenessTaint(key string) bool {
	return key == clusterv1alpha1.TaintClusterNotReady || key == clusterv1alpha1.TaintClusterUnreachable
}

// untolerated returns the first NoExecute taint that is not tolerated (or
// whose toleration ran out), else when the earliest toleration runs out.
func untolerated(taints []corev1.Taint, tolerations []corev1.Toleration, now time.Time) (*corev1.Taint, time.Time) {
	var earliest time.Time
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		until, ok := toleratedUntil(t, tolerations)
		if !ok || (!until.IsZero() && !now.Before(until)) {
			return t, time.Time{}
		}
		if !until.IsZero() && (earliest.IsZero() || until.Before(earliest)) {
			earliest = until
		}
	}
	return nil, earliest
}

// toleratedUntil reports whether some toleration tolerates t, and until
// when: the earliest timeAdded + tolerationSeconds among the tolerating
// ones with seconds, zero for forever (Karmada's GetMinTolerationTime).
func toleratedUntil(t *corev1.Taint, tolerations []corev1.Toleration) (time.Time, bool) {
	var until time.Time
	tolerated := false
	for i := range tolerations {
		tol := &tolerations[i]
		if !placement.Tolerates(tol, t) {
			continue
		}
		tolerated = true
		if tol.TolerationSeconds == nil || t.TimeAdded == nil {
			continue
		}
		end := t.TimeAdded.Add(time.Duration(*tol.TolerationSeconds) * time.Second)
		if until.IsZero() || end.Before(until) {
			until = end
		}
	}
	return until, tolerated
}

// evict removes the cluster from spec.clusters and, unless one exists,
// adds a graceful eviction task for it (Karmada's GracefulEvictCluster).
func evict(s *workv1alpha1.ResourceBindingSpec, ev Eviction, now time.Time) {
	evictTarget(s, workv1alpha1.GracefulEvictionTask{
		FromCluster:       ev.Cluster,
		PurgeMode:         purgeMode(s.Failover),
		Reason:            EvictionReason,
		Message:           fmt.Sprintf("cluster %s has the NoExecute taint {%s} that the placement does not tolerate", ev.Cluster, ev.Taint.ToString()),
		Producer:          EvictionProducer,
		CreationTimestamp: &metav1.Time{Time: now},
	})
}

// evictTarget removes task.FromCluster from spec.clusters and, unless a
// task from that cluster exists, adds task with the replicas the cluster
// had: the one way every eviction (taint, cluster or application failover)
// changes a binding. Nothing happens when the cluster is no target.
func evictTarget(s *workv1alpha1.ResourceBindingSpec, task workv1alpha1.GracefulEvictionTask) {
	i := slices.IndexFunc(s.Clusters, func(t workv1alpha1.TargetCluster) bool { return t.Name == task.FromCluster })
	if i < 0 {
		return
	}
	replicas := s.Clusters[i].Replicas
	s.Clusters = slices.Delete(slices.Clone(s.Clusters), i, i+1)
	if hasTaskFrom(s, task.FromCluster) {
		return
	}
	if replicas > 0 {
		task.Replicas = &replicas
	}
	s.GracefulEvictionTasks = append(slices.Clone(s.GracefulEvictionTasks), task)
}

// hasTaskFrom reports whether a graceful eviction task from cluster exists.
func hasTaskFrom(s *workv1alpha1.ResourceBindingSpec, cluster string) bool {
	return slices.ContainsFunc(s.GracefulEvictionTasks, func(t workv1alpha1.GracefulEvictionTask) bool { return t.FromCluster == cluster })
}

// purgeMode is failover.cluster.purgeMode, Gracefully by default.
func purgeMode(f *policyv1alpha1.FailoverBehavior) policyv1alpha1.PurgeMode {
	if f != nil && f.Cluster != nil && f.Cluster.PurgeMode != "" {
		return f.Cluster.PurgeMode
	}
	return policyv1alpha1.PurgeModeGracefully
}
