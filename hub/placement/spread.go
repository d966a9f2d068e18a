package placement

import (
	"errors"
	"fmt"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// anyReplicas is needReplicas when capacity does not matter for selection
// (Duplicated, or no replicaScheduling): Karmada's InvalidReplicas.
const anyReplicas = -1

// Selection errors, with Karmada's wording.
var (
	errUnsupportedSpread = errors.New("just support cluster and region spread constraint")
	errFewClusters       = errors.New("the number of feasible clusters is less than spreadConstraint.MinGroups")
	errFewRegions        = errors.New("the number of feasible region is less than spreadConstraint.MinGroups")
	errNoRegionCombo     = errors.New("the number of clusters is less than the cluster spreadConstraint.MinGroups")
)

// selectClusters applies the spread constraints to the ordered
// candidates. Without constraints, and for static weights (which ignore
// them), every candidate is selected.
func selectClusters(p *policyv1alpha1.Placement, cands []candidate, replicas int32) ([]candidate, error) {
	if len(p.SpreadConstraints) == 0 || ignoresSpread(p) {
		return cands, nil
	}
	need := int64(replicas)
	if rs := p.ReplicaScheduling; rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		need = anyReplicas
	}
	byField := map[policyv1alpha1.SpreadFieldValue]policyv1alpha1.SpreadConstraint{}
	for _, sc := range p.SpreadConstraints {
		byField[sc.SpreadByField] = sc
	}
	clusterSC, hasCluster := byField[policyv1alpha1.SpreadByFieldCluster]
	if regionSC, ok := byField[policyv1alpha1.SpreadByFieldRegion]; ok {
		return selectByRegion(regionSC, clusterSC, cands, p, replicas)
	}
	if hasCluster {
		return selectByCluster(clusterSC, cands, need)
	}
	return nil, errUnsupportedSpread
}

// ignoresSpread is Karmada's shouldIgnoreSpreadConstraint: Divided +
// Weighted with static weights or no weight preference at all.
func ignoresSpread(p *policyv1alpha1.Placement) bool {
	rs := p.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided ||
		rs.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceWeighted {
		return false
	}
	wp := rs.WeightPreference
	return wp == nil || (len(wp.StaticWeightList) != 0 && wp.DynamicWeight == "")
}

// selectByCluster takes the first min(#candidates, maxGroups) candidates
// and, while their available replicas fall short of need, swaps them from
// the last one backwards with the largest better candidate left out.
// An unset maxGroups means no upper bound (Karmada selects nothing and
// fails; see README).
func selectByCluster(sc policyv1alpha1.SpreadConstraint, cands []candidate, need int64) ([]candidate, error) {
	if len(cands) < sc.MinGroups {
		return nil, errFewClusters
	}
	n := len(cands)
	if sc.MaxGroups > 0 {
		n = min(n, sc.MaxGroups)
	}
	if need == anyReplicas {
		return cands[:n], nil
	}
	picked := append([]candidate(nil), cands[:n]...)
	rest := append([]candidate(nil), cands[n:]...)
	for i := n - 1; i >= 0 && sumAvailable(picked) < need; i-- {
		if j := largestAbove(rest, picked[i].available); j >= 0 {
			picked[i], rest[j] = rest[j], picked[i]
		}
	}
	if len(picked) == 0 || sumAvailable(picked) < need {
		return nil, fmt.Errorf("no enough resource when selecting %d clusters", n)
	}
	return picked, nil
}

// largestAbove is the index of the first candidate with the largest
// available replicas strictly above floor, or -1.
func largestAbove(cands []candidate, floor int64) int {
	best := -1
	for j := range cands {
		if cands[j].available > floor {
			best, floor = j, cands[j].available
		}
	}
	return best
}

func sumAvailable(cands []candidate) int64 {
	var s int64
	for i := range cands {
		s += cands[i].available
	}
	return s
}
