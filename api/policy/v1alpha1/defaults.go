package v1alpha1

// SetDefaults applies the defaults of Karmada's CRD schema and mutating
// webhook: selector namespaces default to the policy namespace, plus the
// defaults of PropagationSpec.SetDefaults.
func (p *PropagationPolicy) SetDefaults() {
	defaultSelectorNamespaces(p.Spec.ResourceSelectors, p.Namespace)
	p.Spec.SetDefaults()
}

// SetDefaults applies the defaults of PropagationSpec.SetDefaults; selector
// namespaces stay empty (any namespace).
func (p *ClusterPropagationPolicy) SetDefaults() {
	p.Spec.SetDefaults()
}

// SetDefaults applies the defaults of Karmada's CRD schema and mutating
// webhook that do not depend on the policy's scope:
//   - priority 0, preemption Never, conflictResolution Abort, schedulerName
//     default-scheduler;
//   - the placement defaults of Placement.SetDefaults;
//   - failover.application: purgeMode Gracefully, tolerationSeconds 300,
//     gracePeriodSeconds 600 when the purge mode is Gracefully/Graciously;
//     failover.cluster: purgeMode Gracefully.
func (s *PropagationSpec) SetDefaults() {
	if s.Priority == nil {
		var zero int32
		s.Priority = &zero
	}
	if s.Preemption == "" {
		s.Preemption = PreemptNever
	}
	if s.ConflictResolution == "" {
		s.ConflictResolution = ConflictAbort
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
	s.Placement.SetDefaults()
	if s.Failover != nil {
		s.Failover.setDefaults()
	}
}

// SetDefaults applies the placement defaults:
//   - a spread constraint with neither spreadByField nor spreadByLabel gets
//     spreadByField cluster, and minGroups 0 becomes 1 (maxGroups is not
//     defaulted);
//   - a present replicaScheduling with an empty type becomes Divided, and
//     Divided with an empty preference becomes Weighted.
//
// A nil replicaScheduling stays nil: it means Duplicated (see
// ReplicaSchedulingType) and is not materialised.
func (p *Placement) SetDefaults() {
	for i := range p.SpreadConstraints {
		sc := &p.SpreadConstraints[i]
		if sc.SpreadByField == "" && sc.SpreadByLabel == "" {
			sc.SpreadByField = SpreadByFieldCluster
		}
		if sc.MinGroups == 0 {
			sc.MinGroups = DefaultMinGroups
		}
	}
	rs := p.ReplicaScheduling
	if rs == nil {
		return
	}
	if rs.ReplicaSchedulingType == "" {
		rs.ReplicaSchedulingType = ReplicaSchedulingTypeDivided
	}
	if rs.ReplicaSchedulingType == ReplicaSchedulingTypeDivided && rs.ReplicaDivisionPreference == "" {
		rs.ReplicaDivisionPreference = ReplicaDivisionPreferenceWeighted
	}
}

func (f *FailoverBehavior) setDefaults() {
	if app := f.Application; app != nil {
		if app.PurgeMode == "" {
			app.PurgeMode = PurgeModeGracefully
		}
		if app.DecisionConditions.TolerationSeconds == nil {
			secs := DefaultTolerationSeconds
			app.DecisionConditions.TolerationSeconds = &secs
		}
		if app.PurgeMode.IsGraceful() && app.GracePeriodSeconds == nil {
			secs := DefaultGracePeriodSeconds
			app.GracePeriodSeconds = &secs
		}
	}
	if c := f.Cluster; c != nil && c.PurgeMode == "" {
		c.PurgeMode = PurgeModeGracefully
	}
}

// SetDefaults sets the namespace of selectors without one to the policy's
// namespace.
func (p *OverridePolicy) SetDefaults() {
	defaultSelectorNamespaces(p.Spec.ResourceSelectors, p.Namespace)
}

// SetDefaults does nothing: a ClusterOverridePolicy has no defaults. It
// exists so that every object has the same methods.
func (p *ClusterOverridePolicy) SetDefaults() {}

func defaultSelectorNamespaces(selectors []ResourceSelector, namespace string) {
	for i := range selectors {
		if selectors[i].Namespace == "" {
			selectors[i].Namespace = namespace
		}
	}
}
