package placement

import (
	"cmp"
	"slices"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// groupScoreUnit weighs replicas over locality in a region's score
// (Karmada's weightUnit): locality scores are at most 100, so a region
// that covers one more replica always ranks higher.
const groupScoreUnit = 1000

// group is one region in the region search: value is its number of
// clusters, weight its score.
type group struct {
	name     string
	value    int64
	weight   int64
	clusters []candidate
}

// selectByRegion picks the best combination of regions, the best
// cluster of each, then fills up to the cluster constraint's maxGroups
// with the other clusters of those regions. It does not check capacity.
func selectByRegion(regionSC, clusterSC policyv1alpha1.SpreadConstraint, cands []candidate,
	p *policyv1alpha1.Placement, replicas int32) ([]candidate, error) {
	groups := regionGroups(cands)
	if len(groups) < regionSC.MinGroups {
		return nil, errFewRegions
	}
	dup := p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated
	for i := range groups {
		groups[i].weight = regionScore(groups[i].clusters, dup, replicas, regionSC.MinGroups, clusterSC.MinGroups)
	}
	// An unset region maxGroups means no upper bound (Karmada finds no
	// combination and fails; see README).
	maxRegions := regionSC.MaxGroups
	if maxRegions <= 0 {
		maxRegions = len(groups)
	}
	chosen := bestPath(groups, regionSC.MinGroups, maxRegions, int64(clusterSC.MinGroups))
	if len(chosen) == 0 {
		return nil, errNoRegionCombo
	}
	var picked, rest []candidate
	for _, g := range chosen {
		picked = append(picked, g.clusters[0])
		rest = append(rest, g.clusters[1:]...)
	}
	fill := min(len(picked)+len(rest), clusterSC.MaxGroups) - len(picked)
	if fill > 0 {
		slices.SortStableFunc(rest, func(a, b candidate) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			if c := cmp.Compare(b.available, a.available); c != 0 {
				return c
			}
			return cmp.Compare(a.name(), b.name())
		})
		picked = append(picked, rest[:fill]...)
	}
	return picked, nil
}

// regionGroups groups candidates by region, keeping candidate order
// within each region; clusters without a region were filtered already.
func regionGroups(cands []candidate) []group {
	index := map[string]int{}
	var groups []group
	for _, c := range cands {
		r := c.cluster.Region
		if r == "" {
			continue
		}
		i, ok := index[r]
		if !ok {
			i = len(groups)
			index[r] = i
			groups = append(groups, group{name: r})
		}
		groups[i].clusters = append(groups[i].clusters, c)
		groups[i].value++
	}
	return groups
}

// regionScore is Karmada's calcGroupScore. Duplicated: 1000 per cluster
// that can hold all replicas plus their average score. Divided: walk the
// region's best clusters until enough of them (the larger minGroups) hold
// a region's share ceil(replicas/regionMin); 1000 per replica covered (up
// to the share) plus the average score of the clusters walked.
func regionScore(clusters []candidate, dup bool, replicas int32, regionMin, clusterMin int) int64 {
	if dup {
		var valid, sum int64
		for _, c := range clusters {
			if c.available >= int64(replicas) {
				valid++
				sum += c.score
			}
		}
		if valid == 0 {
			return 0
		}
		return valid*groupScoreUnit + sum/valid
	}
	m := int64(max(regionMin, 1))
	target := (int64(replicas) + m - 1) / m
	k := max(clusterMin, regionMin)
	var sum, score, count int64
	for _, c := range clusters {
		sum += c.available
		score += c.score
		count++
		if count >= int64(k) && sum >= target {
			break
		}
	}
	if sum < target {
		return sum*groupScoreUnit + score/int64(len(clusters))
	}
	return target*groupScoreUnit + score/count
}
