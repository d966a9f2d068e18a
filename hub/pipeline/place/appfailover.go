package place

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// ApplicationFailoverProducer is the producer of the application failover's
// eviction tasks (Karmada's resource-binding-application-failover-controller).
const ApplicationFailoverProducer = "resource-binding-application-failover-controller"

// ApplicationFailureReason is the reason of the application failover's
// eviction tasks (Karmada's EvictionReasonApplicationFailure).
const ApplicationFailureReason = "ApplicationFailure"

// DefaultApplicationToleration is decisionConditions.tolerationSeconds when
// the policy leaves it out (Karmada's default, 300 s).
const DefaultApplicationToleration = 300 * time.Second

// ApplicationEvictions is Karmada's application failover controller for one
// binding whose policy sets failover.application: since holds, per target
// cluster, when its aggregated status item was first seen Unhealthy (Step
// records it on the binding, AnnotationUnhealthySince, where Karmada keeps
// it in memory). A target item Unhealthy adds
// now if the cluster has no time yet; Healthy forgets the cluster; Unknown
// (no status, a stale or disconnected cluster: that is cluster failover's
// business) keeps the time as it is without counting as Unhealthy; clusters
// no longer targets, or already evicting, are forgotten. A cluster
// Unhealthy for longer than the toleration is returned in evict, unless
// away says its lease is not Ready: its item may predate the loss of
// contact, and losing contact is cluster failover's business (its memory
// is kept, as for Unknown). next is
// the new since; recheck when the next toleration runs out (zero: none).
// A binding without failover.application gets nothing and forgets all.
func ApplicationEvictions(b *workv1alpha1.ResourceBinding, since map[string]time.Time, now time.Time, away func(cluster string) bool) (evict []string, next map[string]time.Time, recheck time.Time) {
	app := ApplicationFailover(b)
	if app == nil {
		return nil, nil, time.Time{}
	}
	toleration := applicationToleration(app)
	health := make(map[string]configv1alpha1.ResourceHealth, len(b.Status.AggregatedStatus))
	for _, it := range b.Status.AggregatedStatus {
		health[it.ClusterName] = it.Health
	}
	next = map[string]time.Time{}
	for _, t := range b.Spec.Clusters {
		if hasTaskFrom(&b.Spec, t.Name) {
			continue
		}
		at, seen := since[t.Name]
		switch h := health[t.Name]; {
		case h == configv1alpha1.ResourceHealthy:
			continue // forgotten
		case h != configv1alpha1.ResourceUnhealthy || away(t.Name):
			// Unknown, no item, or a cluster out of contact: neither counts
			// nor resets.
			if seen {
				next[t.Name] = at
			}
			continue
		case !seen:
			at = now
		}
		next[t.Name] = at
		end := at.Add(toleration)
		if now.After(end) {
			evict = append(evict, t.Name)
			continue
		}
		// now.After(end) is strict, as in Karmada: look again just past it.
		if end = end.Add(time.Millisecond); recheck.IsZero() || end.Before(recheck) {
			recheck = end
		}
	}
	for _, c := range evict {
		delete(next, c)
	}
	if len(next) == 0 {
		next = nil
	}
	return evict, next, recheck
}

func ApplicationFailover(b *workv1alpha1.ResourceBinding) *policyv1alpha1.ApplicationFailoverBehavior {
	if f := b.Spec.Failover; f != nil {
		return f.Application
	}
	return nil
}

func applicationToleration(app *policyv1alpha1.ApplicationFailoverBehavior) time.Duration {
	if s := app.DecisionConditions.TolerationSeconds; s != nil && *s >= 0 {
		return time.Duration(*s) * time.Second
	}
	return DefaultApplicationToleration
}

// evictApplication removes the cluster from spec.clusters and adds the
// application failover's graceful eviction task (Karmada's buildTaskOptions):
// purge mode Gracefully (or its old spelling Graciously) with the policy's
// gracePeriodSeconds — the copy stays until the replacement is healthy or
// the grace period ends; Never with suppressDeletion true — the copy stays
// until the user removes the task; Directly (or Immediately) with
// suppressDeletion false — the copy goes with the next assessment, in the
// same step.
func evictApplication(s *workv1alpha1.ResourceBindingSpec, cluster string, now time.Time) {
	if s.Failover == nil || s.Failover.Application == nil {
		return
	}
	app := s.Failover.Application
	mode := app.PurgeMode
	if mode == "" {
		mode = policyv1alpha1.PurgeModeGracefully
	}
	task := workv1alpha1.GracefulEvictionTask{
		FromCluster:       cluster,
		PurgeMode:         mode,
		Reason:            ApplicationFailureReason,
		Message:           fmt.Sprintf("the application in cluster %s stayed Unhealthy for longer than its toleration, %s", cluster, applicationToleration(app)),
		Producer:          ApplicationFailoverProducer,
		CreationTimestamp: &metav1.Time{Time: now},
	}
	switch {
	case mode.IsGraceful():
		task.GracePeriodSeconds = app.GracePeriodSeconds
	case mode == policyv1alpha1.PurgeModeNever:
		task.SuppressDeletion = ptrTo(true)
	case mode.IsDirect():
		task.SuppressDeletion = ptrTo(false)
	}
	evictTarget(s, task)
}

func ptrTo[T any](v T) *T { return &v }
