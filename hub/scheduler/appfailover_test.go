package scheduler

import (
	"testing"
	"time"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
)

const appToleration = 60 * time.Second

// appBinding is a scheduled Divided binding of 1 replica on m1 (m2 also
// allowed) whose policy sets failover.application with a 60 s toleration
// and mode, and whose m1 item has health h ("" for no item).
func appBinding(mode policyv1alpha1.PurgeMode, h configv1alpha1.ResourceHealth) *workv1alpha1.ResourceBinding {
	b := scheduled(binding(dividedStatic("m1", "m2"), 1, tc("m1", 1)))
	secs := int32(appToleration / time.Second)
	app := &policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: mode}
	app.DecisionConditions.TolerationSeconds = &secs
	if mode.IsGraceful() {
		grace := int32(120)
		app.GracePeriodSeconds = &grace
	}
	b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: app}
	return withHealth(b, h)
}

func withHealth(b *workv1alpha1.ResourceBinding, h configv1alpha1.ResourceHealth) *workv1alpha1.ResourceBinding {
	b.Status.AggregatedStatus = nil
	if h != "" {
		b.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: h}}
	}
	return b
}

// appRun steps b at now with the memory since, as the loop does, and
// returns the outcome.
func appRun(b *workv1alpha1.ResourceBinding, since map[string]time.Time, now time.Time) place.Outcome {
	return place.Step(b, []place.Member{ready("m1"), ready("m2")}, now, place.Options{EvictionTimeout: 10 * time.Minute, UnhealthySince: since})
}

// TestApplicationFailoverAfterToleration: Unhealthy for the toleration
// (60 s) or less evicts nothing; just past it m1 leaves the targets, the
// replica goes to m2, and m1 gets an ApplicationFailure eviction task.
func TestApplicationFailoverAfterToleration(t *testing.T) {
	b := appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy)
	out := appRun(b, nil, t0)
	if len(out.AppEvicted) != 0 || names(out.Binding.Spec.Clusters)[0] != "m1" {
		t.Fatalf("first seen Unhealthy: evicted %v, clusters %v; want nothing yet", out.AppEvicted, names(out.Binding.Spec.Clusters))
	}
	if got := out.UnhealthySince["m1"]; !got.Equal(t0) {
		t.Fatalf("UnhealthySince[m1] = %v; want %v", got, t0)
	}
	if want := t0.Add(appToleration + time.Millisecond); !out.Recheck.Equal(want) {
		t.Errorf("recheck = %v; want %v (the toleration's end)", out.Recheck, want)
	}
	out = appRun(b, out.UnhealthySince, t0.Add(appToleration))
	if len(out.AppEvicted) != 0 {
		t.Fatalf("Unhealthy exactly the toleration: evicted %v; want nothing", out.AppEvicted)
	}
	out = appRun(b, out.UnhealthySince, t0.Add(appToleration+time.Second))
	if len(out.AppEvicted) != 1 || out.AppEvicted[0] != "m1" {
		t.Fatalf("Unhealthy past the toleration: evicted %v; want m1", out.AppEvicted)
	}
	if got := names(out.Binding.Spec.Clusters); len(got) != 1 || got[0] != "m2" {
		t.Errorf("clusters = %v; want [m2]", got)
	}
	tasks := out.Binding.Spec.GracefulEvictionTasks
	if len(tasks) != 1 {
		t.Fatalf("tasks = %+v; want one for m1", tasks)
	}
	task := tasks[0]
	if task.FromCluster != "m1" || task.Reason != place.ApplicationFailureReason || task.Producer != place.ApplicationFailoverProducer ||
		task.PurgeMode != policyv1alpha1.PurgeModeGracefully || task.GracePeriodSeconds == nil || *task.GracePeriodSeconds != 120 ||
		task.SuppressDeletion != nil || task.Replicas == nil || *task.Replicas != 1 {
		t.Errorf("task = %+v; want m1, ApplicationFailure, Gracefully, grace 120 s, 1 replica", task)
	}
	if out.UnhealthySince != nil {
		t.Errorf("UnhealthySince = %v; want m1 forgotten once evicted", out.UnhealthySince)
	}
}

// TestApplicationFailoverUnknownNeverEvicts: Unknown health (or no item:
// a stale or disconnected cluster) neither starts nor ends the toleration
// and never evicts; an Unhealthy item afterwards counts from when the
// application was first seen Unhealthy, as in Karmada.
func TestApplicationFailoverUnknownNeverEvicts(t *testing.T) {
	for _, h := range []configv1alpha1.ResourceHealth{configv1alpha1.ResourceUnknown, ""} {
		out := appRun(appBinding(policyv1alpha1.PurgeModeGracefully, h), nil, t0)
		out = appRun(appBinding(policyv1alpha1.PurgeModeGracefully, h), out.UnhealthySince, t0.Add(time.Hour))
		if len(out.AppEvicted) != 0 || out.UnhealthySince != nil || len(out.Binding.Spec.GracefulEvictionTasks) != 0 {
			t.Errorf("health %q for an hour: evicted %v, memory %v, tasks %+v; want nothing", h, out.AppEvicted, out.UnhealthySince, out.Binding.Spec.GracefulEvictionTasks)
		}
	}
	out := appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy), nil, t0)
	out = appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnknown), out.UnhealthySince, t0.Add(time.Hour))
	if len(out.AppEvicted) != 0 {
		t.Fatalf("Unhealthy, then Unknown past the toleration: evicted %v; want nothing", out.AppEvicted)
	}
	if got := out.UnhealthySince["m1"]; !got.Equal(t0) {
		t.Fatalf("Unknown: UnhealthySince[m1] = %v; want kept at %v", got, t0)
	}
}

// TestApplicationFailoverHealthyResets: a Healthy item forgets the time
// the application was first Unhealthy; the toleration starts over.
func TestApplicationFailoverHealthyResets(t *testing.T) {
	out := appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy), nil, t0)
	out = appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceHealthy), out.UnhealthySince, t0.Add(30*time.Second))
	if out.UnhealthySince != nil {
		t.Fatalf("Healthy: UnhealthySince = %v; want forgotten", out.UnhealthySince)
	}
	again := t0.Add(appToleration + time.Second)
	out = appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy), out.UnhealthySince, again)
	if len(out.AppEvicted) != 0 {
		t.Fatalf("Unhealthy again after Healthy: evicted %v; want the toleration to start over", out.AppEvicted)
	}
	out = appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy), out.UnhealthySince, again.Add(appToleration+time.Second))
	if len(out.AppEvicted) != 1 {
		t.Fatalf("Unhealthy past the new toleration: evicted %v; want m1", out.AppEvicted)
	}
}

// TestApplicationFailoverPurgeModes: Gracefully keeps m1's task (its copy)
// until the replacement is healthy or the grace period ends; Never keeps it
// (suppressDeletion true) until the user acts; Directly ends it in the same
// step, so m1's copy goes at once. A binding without failover.application
// never fails over.
func TestApplicationFailoverPurgeModes(t *testing.T) {
	past := t0.Add(appToleration + time.Second)
	since := map[string]time.Time{"m1": t0}
	tests := []struct {
		mode     policyv1alpha1.PurgeMode
		suppress *bool
		kept     bool
	}{
		{policyv1alpha1.PurgeModeGracefully, nil, true},
		{policyv1alpha1.PurgeModeGraciously, nil, true},
		{policyv1alpha1.PurgeModeNever, ptrTo(true), true},
		{policyv1alpha1.PurgeModeDirectly, ptrTo(false), false},
		{policyv1alpha1.PurgeModeImmediately, ptrTo(false), false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			out := appRun(appBinding(tt.mode, configv1alpha1.ResourceUnhealthy), since, past)
			if got := names(out.Binding.Spec.Clusters); len(out.AppEvicted) != 1 || len(got) != 1 || got[0] != "m2" {
				t.Fatalf("evicted %v, clusters %v; want m1 evicted, [m2]", out.AppEvicted, got)
			}
			tasks := out.Binding.Spec.GracefulEvictionTasks
			if !tt.kept {
				if len(tasks) != 0 {
					t.Errorf("tasks = %+v; want none: the copy goes at once", tasks)
				}
				return
			}
			if len(tasks) != 1 || tasks[0].PurgeMode != tt.mode || (tasks[0].SuppressDeletion == nil) != (tt.suppress == nil) ||
				(tt.suppress != nil && *tasks[0].SuppressDeletion != *tt.suppress) {
				t.Fatalf("tasks = %+v; want one for m1, purge mode %s, suppressDeletion %v", tasks, tt.mode, tt.suppress)
			}
			// m2 reports the replacement Healthy an hour later.
			nb := out.Binding
			nb.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceHealthy}}
			out = appRun(nb, out.UnhealthySince, past.Add(time.Hour))
			wantKept := tt.mode == policyv1alpha1.PurgeModeNever
			if got := len(out.Binding.Spec.GracefulEvictionTasks); (got == 1) != wantKept {
				t.Errorf("replacement Healthy: %d tasks; want the task kept: %v", got, wantKept)
			}
		})
	}
	t.Run("no application failover", func(t *testing.T) {
		b := appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy)
		b.Spec.Failover = nil
		out := appRun(b, since, past)
		if len(out.AppEvicted) != 0 || out.UnhealthySince != nil || len(out.Binding.Spec.Clusters) != 1 {
			t.Errorf("evicted %v, memory %v, clusters %v; want nothing", out.AppEvicted, out.UnhealthySince, names(out.Binding.Spec.Clusters))
		}
	})
}

// TestApplicationFailoverGracePeriod: with the replacement not healthy,
// the Gracefully task ends when its gracePeriodSeconds (120 s) run out.
func TestApplicationFailoverGracePeriod(t *testing.T) {
	past := t0.Add(appToleration + time.Second)
	out := appRun(appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy), map[string]time.Time{"m1": t0}, past)
	nb := out.Binding
	nb.Status.AggregatedStatus = []configv1alpha1.AggregatedStatusItem{{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceUnhealthy}}
	if out = appRun(nb, nil, past.Add(120*time.Second)); len(out.Binding.Spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("at the grace period's end: tasks %+v; want m1's kept", out.Binding.Spec.GracefulEvictionTasks)
	}
	if out = appRun(nb, nil, past.Add(121*time.Second)); len(out.Binding.Spec.GracefulEvictionTasks) != 0 {
		t.Errorf("past the grace period: tasks %+v; want none", out.Binding.Spec.GracefulEvictionTasks)
	}
}

// TestApplicationFailoverOutOfContact: an Unhealthy item of a cluster whose
// lease is not Ready (it may predate the loss of contact) never evicts;
// the time it was first Unhealthy is kept.
func TestApplicationFailoverOutOfContact(t *testing.T) {
	away := ready("m1")
	away.State = lease.StateUnknown
	b := appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy)
	out := place.Step(b, []place.Member{away, ready("m2")}, t0.Add(time.Hour), place.Options{UnhealthySince: map[string]time.Time{"m1": t0}})
	if len(out.AppEvicted) != 0 || len(out.Binding.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("m1 out of contact: evicted %v, tasks %+v; want nothing", out.AppEvicted, out.Binding.Spec.GracefulEvictionTasks)
	}
	if got := out.UnhealthySince["m1"]; !got.Equal(t0) {
		t.Errorf("UnhealthySince[m1] = %v; want kept at %v", got, t0)
	}
}

// TestLoopApplicationFailover: the loop remembers when m1's application
// was first Unhealthy across passes and, on its clock, fails the binding
// over to m2 once the toleration (60 s) has passed, not before.
func TestLoopApplicationFailover(t *testing.T) {
	e := newEnv(t, time.Hour)
	e.putCluster("m1")
	e.putCluster("m2")
	e.heartbeat("m1", "m2")
	e.putBinding(webRef, appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy))
	l, _ := e.start(Config{})
	e.waitPasses(l, 1)
	e.settle(l)
	e.clock.Advance(appToleration / 2)
	e.settle(l)
	// A rewrite of the binding by another controller does not restart the
	// toleration.
	passes := l.passes.Load()
	e.updateBinding(webRef, func(b *workv1alpha1.ResourceBinding) { b.Labels = map[string]string{"touched": "yes"} })
	e.waitPasses(l, passes+1)
	e.settle(l)
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 0 || names(b.Spec.Clusters)[0] != "m1" {
		t.Fatalf("Unhealthy for half the toleration: clusters %v, tasks %+v; want m1 kept", names(b.Spec.Clusters), b.Spec.GracefulEvictionTasks)
	}
	e.clock.Advance(appToleration / 2)
	e.settle(l)
	if b, _ := e.getBinding(webRef); len(b.Spec.GracefulEvictionTasks) != 0 {
		t.Fatalf("Unhealthy exactly the toleration: tasks %+v; want none", b.Spec.GracefulEvictionTasks)
	}
	e.clock.Advance(time.Second)
	b := e.waitBinding(webRef, "failed over to m2", func(b *workv1alpha1.ResourceBinding) bool {
		got := names(b.Spec.Clusters)
		return len(got) == 1 && got[0] == "m2"
	})
	if tasks := b.Spec.GracefulEvictionTasks; len(tasks) != 1 || tasks[0].FromCluster != "m1" || tasks[0].Reason != place.ApplicationFailureReason {
		t.Errorf("tasks = %+v; want m1's ApplicationFailure task", tasks)
	}
}

// TestApplicationFailoverSurvivesLeaderChange: the time a cluster's
// application was first seen Unhealthy is recorded on the binding, so a
// new leader, with no memory of its own, evicts at the original end of the
// toleration, not one toleration after it took over; a Healthy item
// removes the record.
func TestApplicationFailoverSurvivesLeaderChange(t *testing.T) {
	b := appBinding(policyv1alpha1.PurgeModeGracefully, configv1alpha1.ResourceUnhealthy)
	out := appRun(b, nil, t0)
	if got := place.RecordedUnhealthy(out.Binding)["m1"]; !got.Equal(t0) {
		t.Fatalf("recorded unhealthy since of m1 = %v (annotation %q); want %v", got, out.Binding.Annotations[place.AnnotationUnhealthySince], t0)
	}
	// The new leader reads the binding as stored (through its encoding),
	// without the old leader's memory.
	stored := place.CloneBinding(out.Binding)
	next := appRun(stored, nil, t0.Add(appToleration/2))
	if len(next.AppEvicted) != 0 {
		t.Fatalf("new leader half way through the toleration: evicted %v; want nothing yet", next.AppEvicted)
	}
	next = appRun(place.CloneBinding(next.Binding), nil, t0.Add(appToleration+time.Second))
	if len(next.AppEvicted) != 1 || next.AppEvicted[0] != "m1" {
		t.Fatalf("new leader just past the recorded toleration: evicted %v; want [m1]", next.AppEvicted)
	}
	if _, ok := next.Binding.Annotations[place.AnnotationUnhealthySince]; ok {
		t.Errorf("after the eviction the binding still records %q; want it removed", next.Binding.Annotations[place.AnnotationUnhealthySince])
	}
	healthy := withHealth(place.CloneBinding(out.Binding), configv1alpha1.ResourceHealthy)
	if h := appRun(healthy, nil, t0.Add(time.Second)); h.Binding.Annotations[place.AnnotationUnhealthySince] != "" {
		t.Errorf("Healthy: the binding records %q; want the record removed", h.Binding.Annotations[place.AnnotationUnhealthySince])
	}
}
