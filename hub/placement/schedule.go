package placement

import (
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// Schedule places the workload: filter, score, select, assign. With
// clusterAffinities it tries the terms in order from the observed one
// (never going back to an earlier term) and returns the first success,
// or the first term's error when all fail.
//
// Errors: *FitError when no cluster passed the filters (clear the
// binding's clusters), *UnschedulableError when capacity is short, and
// plain errors for selection or strategy problems (for both of those,
// keep the previous clusters).
func Schedule(in Input) (Result, error) {
	terms := in.Placement.ClusterAffinities
	if len(terms) == 0 {
		return scheduleWith(&in, affinitySet{primary: in.Placement.ClusterAffinity})
	}
	var firstErr error
	for i := observedTerm(terms, in.Previous.ObservedAffinityName); i < len(terms); i++ {
		res, err := scheduleWith(&in, termAffinity(&in, &terms[i]))
		if err == nil {
			res.ObservedAffinityName = terms[i].AffinityName
			return res, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return Result{}, firstErr
}

// observedTerm is the index of the term named name, or 0.
func observedTerm(terms []policyv1alpha1.ClusterAffinityTerm, name string) int {
	for i := range terms {
		if name != "" && terms[i].AffinityName == name {
			return i
		}
	}
	return 0
}

// termAffinity is the term's affinity plus, for a workload, its overflow
// affinities.
func termAffinity(in *Input, term *policyv1alpha1.ClusterAffinityTerm) affinitySet {
	set := affinitySet{primary: &term.ClusterAffinity}
	if in.Workload.Replicas > 0 || in.Workload.Requirements != nil {
		for i := range term.OverflowAffinities {
			set.overflow = append(set.overflow, term.OverflowAffinities[i].ClusterAffinity)
		}
	}
	return set
}

// scheduleWith runs one scheduling pass under one affinity set.
func scheduleWith(in *Input, aff affinitySet) (Result, error) {
	feasible, rejected := filterClusters(in, aff)
	if len(feasible) == 0 {
		return Result{Rejected: rejected}, &FitError{NumAllClusters: len(in.Clusters), Rejected: rejected}
	}
	cands := candidates(in, feasible, aff)
	selected, err := selectClusters(&in.Placement, cands, in.Workload.Replicas)
	if err != nil {
		return Result{Rejected: rejected}, wrapf(err, "failed to select clusters")
	}
	targets, err := assign(in, selected, len(aff.overflow) > 0)
	if err != nil {
		return Result{Rejected: rejected}, wrapf(err, "failed to assign replicas")
	}
	if in.EnableEmptyWorkloadPropagation {
		targets = withEmpty(targets, selected)
	}
	return Result{Clusters: targets, Rejected: rejected}, nil
}
