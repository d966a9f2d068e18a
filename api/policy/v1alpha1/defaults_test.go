package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPropagationPolicySetDefaults(t *testing.T) {
	p := &PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team-a"},
		Spec: PropagationSpec{
			ResourceSelectors: []ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}, {APIVersion: "v1", Kind: "Secret", Namespace: "team-a"}},
			Placement: Placement{
				SpreadConstraints: []SpreadConstraint{{}, {SpreadByLabel: "rack", MaxGroups: 3}, {SpreadByField: SpreadByFieldRegion, MinGroups: 2}},
				ReplicaScheduling: &ReplicaSchedulingStrategy{},
			},
			Failover: &FailoverBehavior{Application: &ApplicationFailoverBehavior{}, Cluster: &ClusterFailoverBehavior{}},
		},
	}
	p.SetDefaults()
	want := PropagationSpec{
		ResourceSelectors: []ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team-a"}, {APIVersion: "v1", Kind: "Secret", Namespace: "team-a"}},
		Placement: Placement{
			SpreadConstraints: []SpreadConstraint{
				{SpreadByField: SpreadByFieldCluster, MinGroups: 1},
				{SpreadByLabel: "rack", MaxGroups: 3, MinGroups: 1},
				{SpreadByField: SpreadByFieldRegion, MinGroups: 2},
			},
			ReplicaScheduling: &ReplicaSchedulingStrategy{
				ReplicaSchedulingType:     ReplicaSchedulingTypeDivided,
				ReplicaDivisionPreference: ReplicaDivisionPreferenceWeighted,
			},
		},
		Priority:           ptr[int32](0),
		Preemption:         PreemptNever,
		SchedulerName:      "default-scheduler",
		ConflictResolution: ConflictAbort,
		Failover: &FailoverBehavior{
			Application: &ApplicationFailoverBehavior{
				DecisionConditions: DecisionConditions{TolerationSeconds: ptr[int32](300)},
				PurgeMode:          PurgeModeGracefully,
				GracePeriodSeconds: ptr[int32](600),
			},
			Cluster: &ClusterFailoverBehavior{PurgeMode: PurgeModeGracefully},
		},
	}
	if diff := cmp.Diff(want, p.Spec); diff != "" {
		t.Errorf("SetDefaults(policy) differs (-want +got):\n%s", diff)
	}
	again := p.Spec
	p.SetDefaults()
	if diff := cmp.Diff(again, p.Spec); diff != "" {
		t.Errorf("SetDefaults(SetDefaults(policy)) changed it again (-once +twice):\n%s", diff)
	}
}

func TestSetDefaultsKeepsExplicitValues(t *testing.T) {
	tests := []struct {
		name string
		in   PropagationSpec
		want PropagationSpec
	}{{
		name: "nil replicaScheduling stays nil (Duplicated)",
		in:   PropagationSpec{},
		want: PropagationSpec{Priority: ptr[int32](0), Preemption: PreemptNever, SchedulerName: DefaultSchedulerName, ConflictResolution: ConflictAbort},
	}, {
		name: "Duplicated gets no division preference",
		in: PropagationSpec{Placement: Placement{ReplicaScheduling: &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDuplicated}},
			Priority: ptr[int32](5), Preemption: PreemptAlways, SchedulerName: "mine", ConflictResolution: ConflictOverwrite},
		want: PropagationSpec{Placement: Placement{ReplicaScheduling: &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDuplicated}},
			Priority: ptr[int32](5), Preemption: PreemptAlways, SchedulerName: "mine", ConflictResolution: ConflictOverwrite},
	}, {
		name: "Graciously gets the grace period, Never does not",
		in: PropagationSpec{Failover: &FailoverBehavior{Application: &ApplicationFailoverBehavior{
			PurgeMode: PurgeModeGraciously, DecisionConditions: DecisionConditions{TolerationSeconds: ptr[int32](0)}}}},
		want: PropagationSpec{Priority: ptr[int32](0), Preemption: PreemptNever, SchedulerName: DefaultSchedulerName, ConflictResolution: ConflictAbort,
			Failover: &FailoverBehavior{Application: &ApplicationFailoverBehavior{PurgeMode: PurgeModeGraciously,
				DecisionConditions: DecisionConditions{TolerationSeconds: ptr[int32](0)}, GracePeriodSeconds: ptr[int32](600)}}},
	}, {
		name: "Never gets no grace period",
		in:   PropagationSpec{Failover: &FailoverBehavior{Application: &ApplicationFailoverBehavior{PurgeMode: PurgeModeNever}}},
		want: PropagationSpec{Priority: ptr[int32](0), Preemption: PreemptNever, SchedulerName: DefaultSchedulerName, ConflictResolution: ConflictAbort,
			Failover: &FailoverBehavior{Application: &ApplicationFailoverBehavior{PurgeMode: PurgeModeNever,
				DecisionConditions: DecisionConditions{TolerationSeconds: ptr[int32](300)}}}},
	}}
	for _, tt := range tests {
		spec := tt.in
		spec.SetDefaults()
		if diff := cmp.Diff(tt.want, spec); diff != "" {
			t.Errorf("SetDefaults(%s) differs (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestOtherPoliciesSetDefaults(t *testing.T) {
	selectors := func() []ResourceSelector { return []ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}} }
	cpp := &ClusterPropagationPolicy{Spec: PropagationSpec{ResourceSelectors: selectors()}}
	cpp.SetDefaults()
	if ns := cpp.Spec.ResourceSelectors[0].Namespace; ns != "" || cpp.Spec.Preemption != PreemptNever {
		t.Errorf("SetDefaults(ClusterPropagationPolicy) = namespace %q, preemption %q; want \"\" and Never", ns, cpp.Spec.Preemption)
	}
	op := &OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b"}, Spec: OverrideSpec{ResourceSelectors: selectors()}}
	op.SetDefaults()
	if ns := op.Spec.ResourceSelectors[0].Namespace; ns != "team-b" {
		t.Errorf("SetDefaults(OverridePolicy) selector namespace = %q; want team-b", ns)
	}
	cop := &ClusterOverridePolicy{Spec: OverrideSpec{ResourceSelectors: selectors()}}
	cop.SetDefaults()
	if diff := cmp.Diff(selectors(), cop.Spec.ResourceSelectors); diff != "" {
		t.Errorf("SetDefaults(ClusterOverridePolicy) changed selectors:\n%s", diff)
	}
}
