package schedloop

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
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
// forever. It returns when the next task times out (zero: none will).
func AssessTasks(b *workv1alpha1.ResourceBinding, scheduled bool, now time.Time, timeout time.Duration) (recheck time.Time) {
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
		end := t.CreationTimestamp.Add(taskTimeout(&t, timeout))
		if healthy || now.After(end) {
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
