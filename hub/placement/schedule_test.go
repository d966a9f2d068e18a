package placement

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

func TestScheduleTieBreaks(t *testing.T) {
	caps := []Cluster{cl("a", 10), cl("b", 10), cl("c", 10)}
	odd := deployment(10)
	odd.UID = "uid-a"
	runScheduleTests(t, []scheduleTest{
		{name: "empty uid favours ascending names",
			in:   Input{Placement: policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights}, Clusters: caps, Workload: deployment(10)},
			want: targets("a", 4, "b", 3, "c", 3)},
		{name: "odd uid favours descending names",
			in:   Input{Placement: policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights}, Clusters: caps, Workload: odd},
			want: targets("a", 3, "b", 3, "c", 4)},
	})
}

func TestScheduleSticky(t *testing.T) {
	dyn := policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights}
	agg := policyv1alpha1.Placement{ReplicaScheduling: aggregatedPref}
	excludeX := policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights,
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"x"}}}
	runScheduleTests(t, []scheduleTest{
		{name: "scale up keeps previous and divides the delta by free capacity",
			in: Input{Placement: dyn, Clusters: []Cluster{cl("a", 0), cl("b", 10), cl("c", 10)}, Workload: deployment(10),
				Previous: Previous{Clusters: targets("a", 3, "b", 3)}},
			want: targets("a", 3, "b", 5, "c", 2)},
		{name: "scale down shrinks the previous assignment proportionally",
			in: Input{Placement: dyn, Clusters: []Cluster{cl("a", 100), cl("b", 0), cl("c", 100)}, Workload: deployment(3),
				Previous: Previous{Clusters: targets("a", 6, "b", 3)}},
			want: targets("a", 2, "b", 1)},
		{name: "aggregated scale down consolidates",
			in: Input{Placement: agg, Clusters: []Cluster{cl("a", 10), cl("b", 10), cl("c", 10)}, Workload: deployment(5),
				Previous: Previous{Clusters: targets("a", 2, "b", 6, "c", 2)}},
			want: targets("b", 5)},
		{name: "replicas on a dropped cluster count as missing",
			in: Input{Placement: excludeX, Clusters: []Cluster{cl("a", 10), cl("x", 10), cl("c", 10)}, Workload: deployment(4),
				Previous: Previous{Clusters: targets("a", 2, "x", 2)}},
			want: targets("a", 3, "c", 1)},
		{name: "equal sum is left alone even without capacity",
			in: Input{Placement: agg, Clusters: []Cluster{cl("a", 0), cl("b", 50)}, Workload: deployment(4),
				Previous: Previous{Clusters: targets("a", 4)}},
			want: targets("a", 4)},
	})
}

func TestScheduleClusterAffinities(t *testing.T) {
	term := func(name string, clusters ...string) policyv1alpha1.ClusterAffinityTerm {
		return policyv1alpha1.ClusterAffinityTerm{AffinityName: name,
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: clusters}}
	}
	place := func(terms ...policyv1alpha1.ClusterAffinityTerm) policyv1alpha1.Placement {
		return policyv1alpha1.Placement{ClusterAffinities: terms, ReplicaScheduling: dynamicWeights}
	}
	withOverflow := term("main", "p1")
	withOverflow.OverflowAffinities = []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "burst",
		ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"o1"}}}}
	overflow := policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{withOverflow},
		ReplicaScheduling: aggregatedPref}
	clusters := []Cluster{cl("p1", 1), cl("b1", 10), cl("m1", 10)}
	runScheduleTests(t, []scheduleTest{
		{name: "falls back past a term no cluster matches",
			in:   Input{Placement: place(term("primary", "x"), term("backup", "m1")), Clusters: clusters, Workload: deployment(2)},
			want: targets("m1", 2), observed: "backup"},
		{name: "falls back past a term without capacity",
			in:   Input{Placement: place(term("primary", "p1"), term("backup", "b1")), Clusters: clusters, Workload: deployment(5)},
			want: targets("b1", 5), observed: "backup"},
		{name: "all fail: the first term's error is returned",
			in:      Input{Placement: place(term("primary", "p1"), term("backup", "zzz")), Clusters: clusters, Workload: deployment(5)},
			wantErr: "UnschedulableError", errText: "Clusters available replicas 1 are not enough"},
		{name: "unknown observed name starts from the first term",
			in: Input{Placement: place(term("primary", "m1"), term("backup", "b1")), Clusters: clusters, Workload: deployment(2),
				Previous: Previous{ObservedAffinityName: "gone"}},
			want: targets("m1", 2), observed: "primary"},
		{name: "overflow tiers fill the primary first",
			in:   Input{Placement: overflow, Clusters: []Cluster{cl("p1", 3), cl("o1", 10)}, Workload: deployment(5)},
			want: targets("p1", 3, "o1", 2), observed: "main"},
		{name: "overflow tiers short of capacity",
			in:      Input{Placement: overflow, Clusters: []Cluster{cl("p1", 3), cl("o1", 10)}, Workload: deployment(20)},
			wantErr: "UnschedulableError", errText: "failed to assign replicas: Clusters available replicas are not enough"},
	})
}

func TestScheduleTolerations(t *testing.T) {
	tainted := func(name string, taint corev1.Taint) Cluster {
		c := cl(name, 10)
		c.Taints = []corev1.Taint{taint}
		return c
	}
	clusters := []Cluster{
		tainted("a", corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}),
		tainted("b", corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute}),
		tainted("c", corev1.Taint{Key: "p", Effect: corev1.TaintEffectPreferNoSchedule}),
		tainted("d", corev1.Taint{Key: "other", Value: "x", Effect: corev1.TaintEffectNoSchedule}),
	}
	equal := []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}}
	all := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	runScheduleTests(t, []scheduleTest{
		{name: "equal toleration, PreferNoSchedule ignored",
			in:   Input{Placement: policyv1alpha1.Placement{ClusterTolerations: equal}, Clusters: clusters, Workload: deployment(2)},
			want: targets("a", 2, "c", 2)},
		{name: "exists without key tolerates everything",
			in:   Input{Placement: policyv1alpha1.Placement{ClusterTolerations: all}, Clusters: clusters, Workload: deployment(2)},
			want: targets("a", 2, "b", 2, "c", 2, "d", 2)},
		{name: "no toleration",
			in:   Input{Clusters: clusters, Workload: deployment(2)},
			want: targets("c", 2)},
	})
}

func TestScheduleSpreadConstraints(t *testing.T) {
	inRegion := func(name, region string, n int32) Cluster {
		c := cl(name, n)
		c.Region = region
		return c
	}
	spread := func(rs *policyv1alpha1.ReplicaSchedulingStrategy, scs ...policyv1alpha1.SpreadConstraint) policyv1alpha1.Placement {
		return policyv1alpha1.Placement{ReplicaScheduling: rs, SpreadConstraints: scs}
	}
	byCluster := func(minG, maxG int) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: minG, MaxGroups: maxG}
	}
	byRegion := func(minG, maxG int) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: minG, MaxGroups: maxG}
	}
	regions := []Cluster{inRegion("a", "r1", 10), inRegion("b", "r1", 10), inRegion("c", "r2", 10), inRegion("d", "r3", 5)}
	runScheduleTests(t, []scheduleTest{
		{name: "cluster spread swaps the best-scored cluster for capacity",
			in: Input{Placement: spread(dynamicWeights, byCluster(2, 2)),
				Clusters: []Cluster{cl("m1", 50), cl("m2", 40), cl("m3", 1)}, Workload: deployment(80),
				Previous: Previous{Clusters: targets("m3", 1)}},
			want: targets("m1", 44, "m2", 36)},
		{name: "cluster spread short of capacity",
			in: Input{Placement: spread(dynamicWeights, byCluster(1, 2)),
				Clusters: []Cluster{cl("m1", 5), cl("m2", 5), cl("m3", 5)}, Workload: deployment(20)},
			wantErr: "Error", errText: "failed to select clusters: no enough resource when selecting 2 clusters"},
		{name: "region spread picks the region pair with more clusters, then fills",
			in:   Input{Placement: spread(dynamicWeights, byRegion(2, 2), byCluster(2, 3)), Clusters: regions, Workload: deployment(10)},
			want: targets("a", 4, "b", 3, "c", 3)},
		{name: "region spread, duplicated, no cluster maxGroups: one cluster per region",
			in: Input{Placement: spread(nil, byRegion(1, 2), byCluster(1, 0)),
				Clusters: []Cluster{inRegion("a", "r1", 10), inRegion("b", "r1", 5), inRegion("c", "r2", 10), cl("e", 10)},
				Workload: deployment(3)},
			want: targets("a", 3)},
		{name: "duplicated with cluster maxGroups keeps the best",
			in:   Input{Placement: spread(nil, byCluster(1, 1)), Clusters: []Cluster{cl("a", 1), cl("b", 9)}, Workload: deployment(3)},
			want: targets("b", 3)},
	})
}

func TestScheduleNonWorkload(t *testing.T) {
	cm := Workload{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cfg"}
	runScheduleTests(t, []scheduleTest{
		{name: "duplicated config map goes everywhere with 0",
			in:   Input{Clusters: []Cluster{cl("a", 0), cl("b", 0)}, Workload: cm},
			want: targets("a", 0, "b", 0)},
		{name: "static weights do not apply to a config map",
			in: Input{Placement: policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, false)},
				Clusters: []Cluster{cl("a", 0), cl("b", 0)}, Workload: cm},
			want: targets("a", 0, "b", 0)},
		{name: "Divided without a preference is unsupported",
			in: Input{Placement: policyv1alpha1.Placement{ReplicaScheduling: divided("", false)},
				Clusters: []Cluster{cl("a", 1)}, Workload: deployment(1)},
			wantErr: "Error", errText: "unsupported replica scheduling strategy"},
	})
}

func TestScheduleRejections(t *testing.T) {
	c := cl("a", 10)
	c.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	c.APIEnabled = false
	in := Input{
		Placement: policyv1alpha1.Placement{
			ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}},
			SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 1, MaxGroups: 1}},
		},
		Clusters: []Cluster{c, {Name: "gone", Deleting: true}},
		Workload: deployment(1),
		Previous: Previous{EvictingClusters: []string{"a"}},
	}
	_, err := Schedule(in)
	fit, ok := err.(*FitError)
	if !ok {
		t.Fatalf("Schedule() error = %v; want *FitError", err)
	}
	want := []string{reasonAffinity, "cluster(s) had untolerated taint {k:NoSchedule}", reasonAPI,
		"cluster(s) did not have region property", reasonEviction}
	if len(fit.Rejected) != 1 || strings.Join(fit.Rejected[0].Reasons, "|") != strings.Join(want, "|") {
		t.Errorf("Schedule() rejected = %v; want a with %v", fit.Rejected, want)
	}
	if got, wantMsg := err.Error(), "0/2 clusters are available: 1 "+reasonAffinity+" (a)."; got != wantMsg {
		t.Errorf("Schedule() error = %q; want %q", got, wantMsg)
	}
}

func TestFitErrorMessage(t *testing.T) {
	var many []Rejection
	for _, n := range []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		many = append(many, Rejection{Cluster: n, Reasons: []string{reasonAPI}})
	}
	tests := []struct {
		name string
		err  FitError
		want string
	}{
		{"no cluster", FitError{NumAllClusters: 2}, "0/2 clusters are available: no cluster exists."},
		{"names capped", FitError{NumAllClusters: 7, Rejected: many},
			"0/7 clusters are available: 7 " + reasonAPI + " (c1, c2, c3, c4, c5 and 2 more)."},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("FitError(%s).Error() = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestScheduleWorksLimit(t *testing.T) {
	full := func(name string) Cluster {
		c := cl(name, 10)
		c.WorksFull = true
		return c
	}
	clusters := []Cluster{cl("a", 10), full("b"), cl("c", 10)}
	runScheduleTests(t, []scheduleTest{
		{name: "Duplicated: a full cluster gets no new workload",
			in:   Input{Clusters: clusters, Workload: deployment(2)},
			want: targets("a", 2, "c", 2)},
		{name: "a workload the full cluster already runs stays there",
			in:   Input{Clusters: clusters, Workload: deployment(2), Previous: Previous{Clusters: targets("b", 2)}},
			want: targets("a", 2, "b", 2, "c", 2)},
		{name: "every cluster full: a FitError naming the limit",
			in:      Input{Clusters: []Cluster{full("a"), full("b")}, Workload: deployment(1)},
			wantErr: "FitError", errText: "2 " + reasonWorksFull + " (a, b)"},
	})
	_, err := Schedule(Input{Clusters: []Cluster{full("a")}, Workload: deployment(1)})
	var fit *FitError
	if !errors.As(err, &fit) || len(fit.Rejected) != 1 || fit.Rejected[0].Reasons[0] != reasonWorksFull {
		t.Errorf("Schedule on a full cluster = %v; want it rejected for the works limit", err)
	}
}
