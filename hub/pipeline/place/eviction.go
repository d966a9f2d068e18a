package place

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/placement"
)

// DefaultGracefulEvictionTimeout is how long a graceful eviction task
// keeps the old cluster's copy when the replacement does not become
// healthy (Karmada's --graceful-eviction-timeout).
const DefaultGracefulEvictionTimeout = 10 * time.Minute

// AssessTasks is the graceful eviction controller (spec §6.4) for one
// binding: a task without a creation time gets now; a task is removed when
// suppressDeletion is false, when its grace period (gracePeriodSeconds, or
// timeout) has passed, or when the binding is scheduled and every target
// cluster reports the workload Healthy. suppressDeletion true keeps a task
// forever. A task whose cluster is not Ready (away reports it: its lease
// is Unknown or NotReady, or it has none) does not time out: the copy it
// keeps would go before anything replaced it, and a cluster that turns
// Ready calls its eviction off (Returned); only a healthy replacement ends
// such a task. So the timeout ends only tasks of Ready clusters, that is of
// a drain. It returns when the next task times out (zero: none will).
func AssessTasks(b *workv1alpha1.ResourceBinding, scheduled bool, now time.Time, timeout time.Duration, away func(cluster string) bool) (recheck time.Time) {
	tasks := b.Spec.GracefulEvictionTasks
	if len(tasks) == 0 {
		return time.Time{}
	}
	healthy := scheduled && allHealthy(b)
	kept := make([]workv1alpha1.GracefulEvictionTask, 0, len(tasks))
	for _, t := range tasks {
		if t.CreationTimestamp == nil {
			t.CreationTimestamp = &metav1.Time{Time: now}
		}
		if t.SuppressDeletion != nil {
			if *t.SuppressDeletion {
				kept = append(kept, t)
			}
			continue
		}
		if healthy {
			continue
		}
		if away(t.FromCluster) {
			kept = append(kept, t)
			continue
		}
		end := t.CreationTimestamp.Add(taskTimeout(&t, timeout))
		if now.After(end) {
			continue
		}
		kept = append(kept, t)
		if recheck.IsZero() || end.Before(recheck) {
			recheck = end
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	b.Spec.GracefulEvictionTasks = kept
	// now.After(end) is strict, as in Karmada: look again just past the end.
	if !recheck.IsZero() {
		recheck = recheck.Add(time.Millisecond)
	}
	return recheck
}

func taskTimeout(t *workv1alpha1.GracefulEvictionTask, def time.Duration) time.Duration {
	if t.GracePeriodSeconds != nil {
		return time.Duration(*t.GracePeriodSeconds) * time.Second
	}
	return def
}

// allHealthy: every target cluster has an aggregated status item with
// health Healthy. Unlike Karmada, a binding with no target cluster is not
// "all healthy": its evicted copy is kept until the timeout instead of
// being removed with nothing to replace it.
func allHealthy(b *workv1alpha1.ResourceBinding) bool {
	if len(b.Spec.Clusters) == 0 {
		return false
	}
	health := make(map[string]configv1alpha1.ResourceHealth, len(b.Status.AggregatedStatus))
	for _, it := range b.Status.AggregatedStatus {
		health[it.ClusterName] = it.Health
	}
	for _, t := range b.Spec.Clusters {
		if health[t.Name] != configv1alpha1.ResourceHealthy {
			return false
		}
	}
	return true
}

// Returned calls off the taint manager's eviction of every cluster that is
// back: its lease is Ready, it is not being deleted, and none of its
// NoExecute taints would evict b now (TaintEvictions' rule). The cluster
// becomes a target again with the task's replicas (unless it is one
// already) and the task goes, so that the copy it kept all along stays; a
// Divided binding whose replicas then add up to more than spec.replicas is
// scaled down by the scheduler in the same step (keepDropped then gives a
// cluster it drops its task back). It returns the clusters.
func Returned(b *workv1alpha1.ResourceBinding, member func(name string) (*Member, bool), now time.Time, opts Options) []string {
	failover := FailsOver(b, opts)
	tolerations := Tolerations(b.Spec.Placement.ClusterTolerations, opts)
	var back []string
	kept := b.Spec.GracefulEvictionTasks[:0:0]
	for _, t := range b.Spec.GracefulEvictionTasks {
		m, ok := member(t.FromCluster)
		if t.Producer != EvictionProducer || !ok || m.State != lease.StateReady || m.Cluster.Deleting {
			kept = append(kept, t)
			continue
		}
		if taint, _ := untolerated(evicting(m.Cluster.Taints, failover), tolerations, now); taint != nil {
			kept = append(kept, t)
			continue
		}
		back = append(back, t.FromCluster)
		restore(&b.Spec, t)
	}
	if len(back) > 0 {
		if len(kept) == 0 {
			kept = nil
		}
		b.Spec.GracefulEvictionTasks = kept
	}
	return back
}

// keepDropped gives back its eviction task, restarted now, to a returned
// cluster that the reschedule then left out (a Divided binding scaled back
// down to spec.replicas may drop it): its copy goes only as a graceful
// eviction does, not at once. It returns the returned clusters that stayed
// targets.
func keepDropped(b, nb *workv1alpha1.ResourceBinding, returned []string, now time.Time) []string {
	var kept []string
	for _, c := range returned {
		if slices.ContainsFunc(nb.Spec.Clusters, func(t workv1alpha1.TargetCluster) bool { return t.Name == c }) {
			kept = append(kept, c)
			continue
		}
		i := slices.IndexFunc(b.Spec.GracefulEvictionTasks, func(t workv1alpha1.GracefulEvictionTask) bool { return t.FromCluster == c })
		if i < 0 {
			continue // not a cluster Returned found in b
		}
		task := b.Spec.GracefulEvictionTasks[i]
		task.CreationTimestamp = &metav1.Time{Time: now}
		nb.Spec.GracefulEvictionTasks = append(nb.Spec.GracefulEvictionTasks, task)
	}
	return kept
}

// restore makes the task's cluster a target again with its replicas.
func restore(s *workv1alpha1.ResourceBindingSpec, t workv1alpha1.GracefulEvictionTask) {
	if slices.ContainsFunc(s.Clusters, func(c workv1alpha1.TargetCluster) bool { return c.Name == t.FromCluster }) {
		return
	}
	tc := workv1alpha1.TargetCluster{Name: t.FromCluster}
	if t.Replicas != nil {
		tc.Replicas = *t.Replicas
	}
	s.Clusters = append(slices.Clone(s.Clusters), tc)
	sort.Slice(s.Clusters, func(i, j int) bool { return s.Clusters[i].Name < s.Clusters[j].Name })
}

// notReady: the cluster's lease is not Ready (Unknown, NotReady, or none).
func notReady(m *Member) bool { return m.State != lease.StateReady }

// pruneEvictionRejections drops the "in the process of eviction" reason
// from the recorded rejections of the clusters whose task has ended since
// before (the binding's tasks before this step: called off by Returned or
// ended by AssessTasks), and the rejections left without a reason: a Divided binding is not
// rescheduled when a task ends, and its rejections would otherwise say so
// for good.
func pruneEvictionRejections(b *workv1alpha1.ResourceBinding, before []workv1alpha1.GracefulEvictionTask) {
	ended := map[string]bool{}
	for _, t := range before {
		ended[t.FromCluster] = true
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		delete(ended, t.FromCluster)
	}
	rej, err := placement.Rejections(b)
	if len(ended) == 0 || len(rej) == 0 || err != nil {
		return
	}
	kept := rej[:0]
	for _, r := range rej {
		if ended[r.Cluster] {
			r.Reasons = slices.DeleteFunc(r.Reasons, func(s string) bool { return s == placement.ReasonEviction })
		}
		if len(r.Reasons) > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		delete(b.Annotations, placement.AnnotationRejections)
		return
	}
	b.Annotations[placement.AnnotationRejections] = JSONString(kept)
}
