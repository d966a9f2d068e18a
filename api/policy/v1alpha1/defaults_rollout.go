package v1alpha1

// SetDefaults applies the defaults of a RolloutPolicy: selector namespaces
// default to the policy's namespace, priority to 0 and the strategy's type
// to All. The parameters' defaults (maxConcurrency 1, minSuccessTime 0, no
// progress deadline, maxFailures 0) are read through RolloutStrategy.Gates
// and MaxConcurrency, whether or not the object was defaulted.
func (p *RolloutPolicy) SetDefaults() {
	defaultSelectorNamespaces(p.Spec.ResourceSelectors, p.Namespace)
	if p.Spec.Priority == nil {
		var zero int32
		p.Spec.Priority = &zero
	}
	if p.Spec.RolloutStrategy.Type == "" {
		p.Spec.RolloutStrategy.Type = RolloutAll
	}
}

// EffectiveType is the strategy's type, All when it is not set.
func (s *RolloutStrategy) EffectiveType() RolloutType {
	if s.Type == "" {
		return RolloutAll
	}
	return s.Type
}

// Gates returns the health gates of the strategy's type; the zero value
// (no mandatory groups, no soak, no deadline, no failure tolerated) for
// type All or when the type's parameters are not given.
func (s *RolloutStrategy) Gates() RolloutGates {
	switch {
	case s.EffectiveType() == RolloutProgressive && s.Progressive != nil:
		return s.Progressive.RolloutGates
	case s.EffectiveType() == RolloutProgressivePerGroup && s.ProgressivePerGroup != nil:
		return s.ProgressivePerGroup.RolloutGates
	}
	return RolloutGates{}
}

// GroupLabel is the cluster label that names a cluster's group.
func (s *RolloutStrategy) GroupLabel() string {
	if s.GroupBy == "" {
		return DefaultGroupLabel
	}
	return s.GroupBy
}
