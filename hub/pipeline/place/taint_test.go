package place

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

func TestTaintEvictions(t *testing.T) {
	added := t0.Add(-time.Minute)
	secs := func(s int64) *int64 { return &s }
	soft := corev1.Taint{Key: "soft", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		members     []Member
		want        []string
		wantRecheck time.Time
	}{
		{"no NoExecute taint", nil, []Member{ready("m1", soft), ready("m2")}, nil, time.Time{}},
		{"untolerated NoExecute", nil, []Member{ready("m1", noExecute("k", added)), ready("m2")}, []string{"m1"}, time.Time{}},
		{"tolerated forever", []corev1.Toleration{noExecuteToleration("k", nil)}, []Member{ready("m1", noExecute("k", added))}, nil, time.Time{}},
		{"tolerated for 120s: recheck when it runs out", []corev1.Toleration{noExecuteToleration("k", secs(120))},
			[]Member{ready("m1", noExecute("k", added))}, nil, added.Add(120 * time.Second)},
		{"tolerated for 30s, ran out", []corev1.Toleration{noExecuteToleration("k", secs(30))},
			[]Member{ready("m1", noExecute("k", added))}, []string{"m1"}, time.Time{}},
		{"the shorter of two tolerations counts", []corev1.Toleration{noExecuteToleration("k", secs(300)), noExecuteToleration("", secs(90))},
			[]Member{ready("m1", noExecute("k", added))}, nil, added.Add(90 * time.Second)},
		{"a second untolerated taint", []corev1.Toleration{noExecuteToleration("k", nil)},
			[]Member{ready("m1", noExecute("k", added), noExecute("other", added))}, []string{"m1"}, time.Time{}},
		{"non-target cluster ignored", nil, []Member{ready("m1"), ready("m3", noExecute("k", added))}, nil, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := dividedStatic("m1", "m2")
			p.ClusterTolerations = tt.tolerations
			b := binding(p, 2, tc("m1", 1), tc("m2", 1))
			evs, recheck := TaintEvictions(b, lookupIn(tt.members), t0, Options{})
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Cluster)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || !recheck.Equal(tt.wantRecheck) {
				t.Errorf("TaintEvictions = %v, recheck %v; want %v, %v", got, recheck, tt.want, tt.wantRecheck)
			}
		})
	}
}

func TestEvict(t *testing.T) {
	b := binding(dividedStatic("m1", "m2"), 3, tc("m1", 1), tc("m2", 2))
	b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}}
	ev := Eviction{Cluster: "m2", Taint: noExecute("k", t0)}
	evict(&b.Spec, ev, t0)
	evict(&b.Spec, ev, t0) // idempotent
	if got := names(b.Spec.Clusters); !cmp.Equal(got, []string{"m1"}) {
		t.Errorf("clusters after evict = %v; want [m1]", got)
	}
	want := []workv1alpha1.GracefulEvictionTask{{
		FromCluster: "m2", PurgeMode: policyv1alpha1.PurgeModeDirectly, Replicas: ptr(int32(2)),
		Reason: EvictionReason, Producer: EvictionProducer, CreationTimestamp: &metav1.Time{Time: t0},
		Message: "cluster m2 has the NoExecute taint {k:NoExecute} that the placement does not tolerate",
	}}
	if diff := cmp.Diff(want, b.Spec.GracefulEvictionTasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
}

func TestAssessTasks(t *testing.T) {
	created := &metav1.Time{Time: t0.Add(-5 * time.Minute)}
	task := func(mod func(*workv1alpha1.GracefulEvictionTask)) workv1alpha1.GracefulEvictionTask {
		tk := workv1alpha1.GracefulEvictionTask{FromCluster: "m3", Reason: EvictionReason, Producer: EvictionProducer, CreationTimestamp: created}
		if mod != nil {
			mod(&tk)
		}
		return tk
	}
	healthy := []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Health: configv1alpha1.ResourceHealthy}, {ClusterName: "m2", Health: configv1alpha1.ResourceHealthy}}
	oneUnknown := []configv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Health: configv1alpha1.ResourceHealthy}, {ClusterName: "m2", Health: configv1alpha1.ResourceUnknown}}
	tests := []struct {
		name        string
		task        workv1alpha1.GracefulEvictionTask
		targets     []workv1alpha1.TargetCluster
		items       []configv1alpha1.AggregatedStatusItem
		scheduled   bool
		timeout     time.Duration
		wantKept    bool
		wantRecheck time.Time
		away        bool // m3 is not Ready
	}{
		{"within the timeout, replacement not healthy", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1), tc("m2", 1)}, oneUnknown, true, 10 * time.Minute, true, created.Add(10*time.Minute + time.Millisecond), false},
		{"replacement healthy", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1), tc("m2", 1)}, healthy, true, 10 * time.Minute, false, time.Time{}, false},
		{"healthy but not scheduled yet", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1), tc("m2", 1)}, healthy, false, 10 * time.Minute, true, created.Add(10*time.Minute + time.Millisecond), false},
		{"timed out", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1)}, nil, true, 4 * time.Minute, false, time.Time{}, false},
		{"own grace period", task(func(tk *workv1alpha1.GracefulEvictionTask) { tk.GracePeriodSeconds = ptr(int32(60)) }), nil, nil, true, time.Hour, false, time.Time{}, false},
		{"no target cluster: not all healthy", task(nil), nil, nil, true, 10 * time.Minute, true, created.Add(10*time.Minute + time.Millisecond), false},
		{"suppressDeletion true: forever", task(func(tk *workv1alpha1.GracefulEvictionTask) { tk.SuppressDeletion = ptr(true) }), nil, nil, true, time.Second, true, time.Time{}, false},
		{"suppressDeletion false: at once", task(func(tk *workv1alpha1.GracefulEvictionTask) { tk.SuppressDeletion = ptr(false) }), nil, nil, true, time.Hour, false, time.Time{}, false},
		{"no creation time: stamped now", task(func(tk *workv1alpha1.GracefulEvictionTask) { tk.CreationTimestamp = nil }), nil, nil, true, time.Minute, true, t0.Add(time.Minute + time.Millisecond), false},
		{"timed out, but the cluster is away: kept until it is Ready", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1)}, nil, true, 4 * time.Minute, true, time.Time{}, true},
		{"own grace period over, the cluster away: kept", task(func(tk *workv1alpha1.GracefulEvictionTask) { tk.GracePeriodSeconds = ptr(int32(60)) }), nil, nil, true, time.Hour, true, time.Time{}, true},
		{"the cluster away, replacement healthy: removed", task(nil), []workv1alpha1.TargetCluster{tc("m1", 1), tc("m2", 1)}, healthy, true, 10 * time.Minute, false, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := binding(dividedStatic("m1", "m2"), 2, tt.targets...)
			b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{tt.task}
			b.Status.AggregatedStatus = tt.items
			away := func(c string) bool { return tt.away && c == "m3" }
			recheck := AssessTasks(b, tt.scheduled, t0, tt.timeout, away)
			if kept := len(b.Spec.GracefulEvictionTasks) == 1; kept != tt.wantKept || !recheck.Equal(tt.wantRecheck) {
				t.Errorf("AssessTasks: kept %v, recheck %v; want %v, %v", kept, recheck, tt.wantKept, tt.wantRecheck)
			}
		})
	}
}

// TestTaintEvictionsUnreachable: losing a cluster's lease moves a binding
// only when its policy (or the hub) asks for failover, only once the
// toleration (default 300 s) has run out, and never a Duplicated one.
func TestTaintEvictionsUnreachable(t *testing.T) {
	secs := func(s int64) *int64 { return &s }
	unreachableFor := func(d time.Duration) []Member {
		return []Member{ready("m1", noExecute(clusterUnreachable, t0.Add(-d))), ready("m2")}
	}
	optIn := func(b *workv1alpha1.ResourceBinding) {
		b.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{}}
	}
	tolerate := func(s *int64) func(*workv1alpha1.ResourceBinding) {
		return func(b *workv1alpha1.ResourceBinding) {
			optIn(b)
			b.Spec.Placement.ClusterTolerations = []corev1.Toleration{noExecuteToleration(clusterUnreachable, s)}
		}
	}
	divided := func() *workv1alpha1.ResourceBinding {
		return binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1))
	}
	dup := func() *workv1alpha1.ResourceBinding { return binding(duplicated(), 2, tc("m1", 2), tc("m2", 2)) }
	tests := []struct {
		name        string
		b           func() *workv1alpha1.ResourceBinding
		modify      func(*workv1alpha1.ResourceBinding)
		opts        Options
		away        time.Duration
		want        []string
		wantRecheck time.Time
	}{
		{"Divided, no failover asked: kept however long", divided, nil, Options{}, time.Hour, nil, time.Time{}},
		{"failover.cluster, within the default 300 s", divided, optIn, Options{}, time.Minute, nil, t0.Add(4 * time.Minute)},
		{"failover.cluster, after the default 300 s", divided, optIn, Options{}, 5 * time.Minute, []string{"m1"}, time.Time{}},
		{"hub flag, after the default 300 s", divided, nil, Options{FailoverUnreachable: true}, 10 * time.Minute, []string{"m1"}, time.Time{}},
		{"hub flag, a shorter default toleration", divided, nil, Options{FailoverUnreachable: true, UnreachableToleration: time.Minute}, time.Minute, []string{"m1"}, time.Time{}},
		{"the policy's own toleration wins over the default", divided, tolerate(secs(30)), Options{}, time.Minute, []string{"m1"}, time.Time{}},
		{"the policy tolerates forever", divided, tolerate(nil), Options{}, time.Hour, nil, time.Time{}},
		{"Duplicated with failover.cluster: never", dup, optIn, Options{}, time.Hour, nil, time.Time{}},
		{"Duplicated with the hub flag: never", dup, nil, Options{FailoverUnreachable: true}, time.Hour, nil, time.Time{}},
		{"non-workload: never", func() *workv1alpha1.ResourceBinding {
			return binding(dividedStatic("m1", "m2"), 0, tc("m1", 0), tc("m2", 0))
		},
			optIn, Options{}, time.Hour, nil, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b()
			if tt.modify != nil {
				tt.modify(b)
			}
			evs, recheck := TaintEvictions(b, lookupIn(unreachableFor(tt.away)), t0, tt.opts)
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Cluster)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || !recheck.Equal(tt.wantRecheck) {
				t.Errorf("TaintEvictions = %v, recheck %v; want %v, %v", got, recheck, tt.want, tt.wantRecheck)
			}
		})
	}
}

func TestTolerationsDefaults(t *testing.T) {
	secs := int64(300)
	def := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}
	}
	own := noExecuteToleration(clusterUnreachable, nil)
	all := corev1.Toleration{Operator: corev1.TolerationOpExists}
	tests := []struct {
		name   string
		placed []corev1.Toleration
		want   []corev1.Toleration
	}{
		{"none: both defaults", nil, []corev1.Toleration{def("cluster.karmada.io/not-ready"), def(clusterUnreachable)}},
		{"own unreachable toleration kept, not-ready added", []corev1.Toleration{own}, []corev1.Toleration{own, def("cluster.karmada.io/not-ready")}},
		{"tolerates everything: nothing added", []corev1.Toleration{all}, []corev1.Toleration{all}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Tolerations(tt.placed, Options{})); diff != "" {
				t.Errorf("Tolerations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEvictionGraceSurvivesLeaderChange: a drain's eviction task records
// its start on the binding; a new leader stepping the binding as stored
// (through its encoding, without the old leader's state) keeps the copy
// until the recorded grace ends and removes the task just past it, not one
// grace after it took over.
func TestEvictionGraceSurvivesLeaderChange(t *testing.T) {
	const grace = 60 * time.Second
	opts := Options{EvictionTimeout: grace}
	b := scheduled(binding(&policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}}, 1, tc("m1", 1)))
	drained := []Member{ready("m1", noExecute("drain", t0))}
	out := Step(b, drained, t0, opts)
	if len(out.Binding.Spec.GracefulEvictionTasks) != 1 || len(out.Binding.Spec.Clusters) != 0 {
		t.Fatalf("drained at t0: tasks %+v, clusters %v; want one task and no target", out.Binding.Spec.GracefulEvictionTasks, names(out.Binding.Spec.Clusters))
	}
	for _, at := range []time.Duration{grace / 2, grace} {
		next := Step(CloneBinding(out.Binding), drained, t0.Add(at), opts)
		if len(next.Binding.Spec.GracefulEvictionTasks) != 1 {
			t.Errorf("new leader at t0+%s: tasks %+v; want the task kept until t0+%s", at, next.Binding.Spec.GracefulEvictionTasks, grace)
		}
		if want := t0.Add(grace + time.Millisecond); !next.Recheck.Equal(want) {
			t.Errorf("new leader at t0+%s: recheck %v; want %v, the recorded grace's end", at, next.Recheck, want)
		}
	}
	next := Step(CloneBinding(out.Binding), drained, t0.Add(grace+time.Second), opts)
	if len(next.Binding.Spec.GracefulEvictionTasks) != 0 {
		t.Errorf("new leader at t0+%s: tasks %+v; want the task ended at the recorded grace's end", grace+time.Second, next.Binding.Spec.GracefulEvictionTasks)
	}
}
