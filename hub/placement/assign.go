package placement

import (
	"errors"
	"fmt"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// strategy is how replicas are divided among the selected clusters.
type strategy int

const (
	duplicated strategy = iota
	aggregated
	staticWeight
	dynamicWeight
)

var (
	errNoClusters          = errors.New("no clusters available to schedule")
	errUnsupportedStrategy = errors.New("unsupported replica scheduling strategy")
)

// strategyOf maps the replica scheduling settings to a strategy; nil
// replicaScheduling is Duplicated. ok is false for combinations the
// defaults would have filled (Divided without a preference).
func strategyOf(rs *policyv1alpha1.ReplicaSchedulingStrategy) (s strategy, ok bool) {
	if rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return duplicated, true
	}
	if rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return 0, false
	}
	switch rs.ReplicaDivisionPreference {
	case policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return aggregated, true
	case policyv1alpha1.ReplicaDivisionPreferenceWeighted:
		if rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "" {
			return dynamicWeight, true
		}
		return staticWeight, true
	}
	return 0, false
}

// assign divides the workload's replicas among the selected clusters and
// drops clusters left with none. A non-workload (several components) and
// a workload scaled to 0 get every selected cluster with 0 replicas
// (Karmada drops them all when the workload has requirements; see README).
func assign(in *Input, selected []candidate, tiered bool) ([]TargetCluster, error) {
	if len(selected) == 0 {
		return nil, errNoClusters
	}
	w := &in.Workload
	if w.Replicas <= 0 || w.Components > 1 {
		out := make([]TargetCluster, len(selected))
		for i := range selected {
			out[i] = TargetCluster{Name: selected[i].name()}
		}
		return out, nil
	}
	s, ok := strategyOf(in.Placement.ReplicaScheduling)
	if !ok {
		return nil, errUnsupportedStrategy
	}
	var out []TargetCluster
	var err error
	if tiered {
		out, err = assignTiers(in, s, selected)
	} else {
		out, err = assignWith(in, s, selected, w.Replicas)
	}
	if err != nil {
		return nil, err
	}
	return withoutZeros(out), nil
}

// assignTiers fills the overflow tiers in order: each tier takes what its
// clusters can hold of what is left, divided by the normal strategy.
func assignTiers(in *Input, s strategy, selected []candidate) ([]TargetCluster, error) {
	remaining := in.Workload.Replicas
	var out []TargetCluster
	for start := 0; start < len(selected) && remaining > 0; {
		end := start
		for end < len(selected) && selected[end].overflow == selected[start].overflow {
			end++
		}
		tier := selected[start:end]
		n := int32(min(int64(remaining), sumAvailable(tier)))
		part, err := assignWith(in, s, tier, n)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		remaining -= n
		start = end
	}
	if remaining > 0 {
		return nil, &UnschedulableError{Message: "Clusters available replicas are not enough to schedule."}
	}
	return out, nil
}

// assignWith divides replicas among cands with strategy s.
func assignWith(in *Input, s strategy, cands []candidate, replicas int32) ([]TargetCluster, error) {
	switch s {
	case duplicated:
		out := make([]TargetCluster, len(cands))
		for i := range cands {
			out[i] = TargetCluster{Name: cands[i].name(), Replicas: replicas}
		}
		return out, nil
	case staticWeight:
		return assignStatic(in, cands, replicas), nil
	default:
		return assignDynamic(in, s == aggregated, cands, replicas)
	}
}

// withoutZeros drops targets with no replicas.
func withoutZeros(ts []TargetCluster) []TargetCluster {
	out := ts[:0:0]
	for _, t := range ts {
		if t.Replicas > 0 {
			out = append(out, t)
		}
	}
	return out
}

// withEmpty appends the selected clusters missing from the result with 0
// replicas (enableEmptyWorkloadPropagation).
func withEmpty(ts []TargetCluster, selected []candidate) []TargetCluster {
	in := make(map[string]bool, len(ts))
	for _, t := range ts {
		in[t.Name] = true
	}
	for i := range selected {
		if !in[selected[i].name()] {
			ts = append(ts, TargetCluster{Name: selected[i].name()})
		}
	}
	return ts
}

// targetsOf converts Webster parties to targets, in name order.
func targetsOf(parties []party) []TargetCluster {
	out := make([]TargetCluster, len(parties))
	for i, p := range parties {
		out[i] = TargetCluster{Name: p.name, Replicas: p.seats}
	}
	return out
}

// assignStatic divides by the static weight list: each candidate weighs
// the largest weight of the rules matching it, unmatched candidates get
// nothing, and if none matches all weigh 1. Capacity and the previous
// result are ignored.
func assignStatic(in *Input, cands []candidate, replicas int32) []TargetCluster {
	var rules []policyv1alpha1.StaticClusterWeight
	if wp := in.Placement.ReplicaScheduling.WeightPreference; wp != nil {
		rules = wp.StaticWeightList
	}
	parties := make([]party, 0, len(cands))
	for i := range cands {
		var w int64
		for j := range rules {
			if clusterMatches(cands[i].cluster, &rules[j].TargetCluster) {
				w = max(w, rules[j].Weight)
			}
		}
		if w > 0 {
			parties = append(parties, party{name: cands[i].name(), votes: w})
		}
	}
	if len(parties) == 0 {
		for i := range cands {
			parties = append(parties, party{name: cands[i].name(), votes: 1})
		}
	}
	return targetsOf(webster(replicas, parties, in.Workload.UID))
}

// wrapf is fmt.Errorf that keeps the wrapped error's type reachable.
func wrapf(err error, what string) error { return fmt.Errorf("%s: %w", what, err) }
