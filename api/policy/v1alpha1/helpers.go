package v1alpha1

// Default values, as Karmada's CRD schema and webhooks set them.
const (
	// DefaultTolerationSeconds is the default of
	// failover.application.decisionConditions.tolerationSeconds, in seconds.
	DefaultTolerationSeconds int32 = 300
	// DefaultGracePeriodSeconds is the default of
	// failover.application.gracePeriodSeconds with PurgeMode Gracefully, in
	// seconds.
	DefaultGracePeriodSeconds int32 = 600
	// DefaultMinGroups is the default of spreadConstraints[].minGroups.
	DefaultMinGroups = 1
)

// ExplicitPriority returns the policy priority; nil means 0.
func (s *PropagationSpec) ExplicitPriority() int32 {
	if s.Priority == nil {
		return 0
	}
	return *s.Priority
}

// PreemptionPolicy returns the effective preemption; empty means Never.
func (s *PropagationSpec) PreemptionPolicy() PreemptionPolicy {
	if s.Preemption == "" {
		return PreemptNever
	}
	return s.Preemption
}

// EffectiveConflictResolution returns the conflict resolution; empty means
// Abort.
func (s *PropagationSpec) EffectiveConflictResolution() ConflictResolution {
	if s.ConflictResolution == "" {
		return ConflictAbort
	}
	return s.ConflictResolution
}

// EffectiveSchedulerName returns the scheduler name; empty means
// "default-scheduler".
func (s *PropagationSpec) EffectiveSchedulerName() string {
	if s.SchedulerName == "" {
		return DefaultSchedulerName
	}
	return s.SchedulerName
}

// ReplicaSchedulingType returns how replicas are scheduled: Duplicated when
// ReplicaScheduling is nil, Divided when it is present with an empty type
// (the CRD default).
func (p *Placement) ReplicaSchedulingType() ReplicaSchedulingType {
	if p.ReplicaScheduling == nil {
		return ReplicaSchedulingTypeDuplicated
	}
	if p.ReplicaScheduling.ReplicaSchedulingType == "" {
		return ReplicaSchedulingTypeDivided
	}
	return p.ReplicaScheduling.ReplicaSchedulingType
}

// ReplicaDivisionPreference returns how Divided replicas are divided: empty
// unless the type is Divided, Weighted when the preference is empty.
func (p *Placement) ReplicaDivisionPreference() ReplicaDivisionPreference {
	if p.ReplicaSchedulingType() != ReplicaSchedulingTypeDivided {
		return ""
	}
	if p.ReplicaScheduling.ReplicaDivisionPreference == "" {
		return ReplicaDivisionPreferenceWeighted
	}
	return p.ReplicaScheduling.ReplicaDivisionPreference
}

// IsDynamicWeighted reports whether replicas are Divided and Weighted by a
// dynamic weight.
func (p *Placement) IsDynamicWeighted() bool {
	if p.ReplicaDivisionPreference() != ReplicaDivisionPreferenceWeighted {
		return false
	}
	wp := p.ReplicaScheduling.WeightPreference
	return wp != nil && wp.DynamicWeight != ""
}

// IsEmpty reports whether the affinity sets no filter at all.
func (a *ClusterAffinity) IsEmpty() bool {
	return a.LabelSelector == nil && a.FieldSelector == nil &&
		len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0
}

// IsEmpty reports whether no overrider is set.
func (o *Overriders) IsEmpty() bool {
	return len(o.Plaintext)+len(o.ImageOverrider)+len(o.CommandOverrider)+
		len(o.ArgsOverrider)+len(o.LabelsOverrider)+len(o.AnnotationsOverrider)+
		len(o.FieldOverrider) == 0
}

// Rules returns the rules to apply: OverrideRules, or when there are none
// the deprecated single rule made of TargetCluster and Overriders.
func (s *OverrideSpec) Rules() []RuleWithCluster {
	if len(s.OverrideRules) > 0 {
		return s.OverrideRules
	}
	return []RuleWithCluster{{TargetCluster: s.TargetCluster, Overriders: s.Overriders}}
}
