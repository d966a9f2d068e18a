package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlacementAccessors(t *testing.T) {
	tests := []struct {
		name    string
		rs      *ReplicaSchedulingStrategy
		typ     ReplicaSchedulingType
		pref    ReplicaDivisionPreference
		dynamic bool
	}{
		{"nil", nil, ReplicaSchedulingTypeDuplicated, "", false},
		{"empty", &ReplicaSchedulingStrategy{}, ReplicaSchedulingTypeDivided, ReplicaDivisionPreferenceWeighted, false},
		{"Duplicated", &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDuplicated,
			ReplicaDivisionPreference: ReplicaDivisionPreferenceAggregated}, ReplicaSchedulingTypeDuplicated, "", false},
		{"Aggregated", divided(ReplicaDivisionPreferenceAggregated, ""), ReplicaSchedulingTypeDivided, ReplicaDivisionPreferenceAggregated, false},
		{"dynamic", divided("", DynamicWeightByAvailableReplicas), ReplicaSchedulingTypeDivided, ReplicaDivisionPreferenceWeighted, true},
		{"static", divided(ReplicaDivisionPreferenceWeighted, ""), ReplicaSchedulingTypeDivided, ReplicaDivisionPreferenceWeighted, false},
	}
	for _, tt := range tests {
		p := Placement{ReplicaScheduling: tt.rs}
		if got := p.ReplicaSchedulingType(); got != tt.typ {
			t.Errorf("ReplicaSchedulingType(%s) = %q; want %q", tt.name, got, tt.typ)
		}
		if got := p.ReplicaDivisionPreference(); got != tt.pref {
			t.Errorf("ReplicaDivisionPreference(%s) = %q; want %q", tt.name, got, tt.pref)
		}
		if got := p.IsDynamicWeighted(); got != tt.dynamic {
			t.Errorf("IsDynamicWeighted(%s) = %v; want %v", tt.name, got, tt.dynamic)
		}
	}
}

func TestSpecAccessors(t *testing.T) {
	var s PropagationSpec
	if s.ExplicitPriority() != 0 || s.PreemptionPolicy() != PreemptNever ||
		s.EffectiveConflictResolution() != ConflictAbort || s.EffectiveSchedulerName() != DefaultSchedulerName {
		t.Errorf("accessors(empty spec) = %d %q %q %q; want 0 Never Abort default-scheduler", s.ExplicitPriority(),
			s.PreemptionPolicy(), s.EffectiveConflictResolution(), s.EffectiveSchedulerName())
	}
	s.Priority = ptr[int32](7)
	if s.ExplicitPriority() != 7 {
		t.Errorf("ExplicitPriority(7) = %d; want 7", s.ExplicitPriority())
	}
}

func TestOverrideRules(t *testing.T) {
	legacy := OverrideSpec{
		TargetCluster: &ClusterAffinity{ClusterNames: []string{"m1"}},
		Overriders:    Overriders{ImageOverrider: []ImageOverrider{{Component: Tag, Operator: OverriderOpReplace, Value: "v"}}},
	}
	want := []RuleWithCluster{{TargetCluster: legacy.TargetCluster, Overriders: legacy.Overriders}}
	if diff := cmp.Diff(want, legacy.Rules()); diff != "" {
		t.Errorf("Rules(deprecated form) differs (-want +got):\n%s", diff)
	}
	rules := OverrideSpec{OverrideRules: want}
	if diff := cmp.Diff(want, rules.Rules()); diff != "" {
		t.Errorf("Rules(overrideRules) differs (-want +got):\n%s", diff)
	}
	if !(&Overriders{}).IsEmpty() || legacy.Overriders.IsEmpty() {
		t.Errorf("IsEmpty() wrong for empty or non-empty overriders")
	}
}

func TestPurgeModeSpellings(t *testing.T) {
	for _, m := range []PurgeMode{PurgeModeGracefully, PurgeModeGraciously} {
		if !m.IsGraceful() || m.IsDirect() {
			t.Errorf("%s: IsGraceful, IsDirect = %v, %v; want true, false", m, m.IsGraceful(), m.IsDirect())
		}
	}
	for _, m := range []PurgeMode{PurgeModeDirectly, PurgeModeImmediately} {
		if m.IsGraceful() || !m.IsDirect() {
			t.Errorf("%s: IsGraceful, IsDirect = %v, %v; want false, true", m, m.IsGraceful(), m.IsDirect())
		}
	}
}
