package placement

import (
	"cmp"
	"slices"
)

// localityScore is ClusterLocality's score for a cluster already in the
// previous result; every other score is 0, so a total is 0 or 100.
const localityScore = 100

// candidate is a feasible cluster with what selection and assignment use.
type candidate struct {
	cluster *Cluster
	// overflow is the affinity tier: 0 primary, i the i-th overflow.
	overflow int
	// score is localityScore for previously used clusters, else 0.
	score int64
	// free is the estimate of more replicas it can take (Karmada's
	// AllocatableReplicas); dynamic scale-up weights use it.
	free int64
	// available is free plus the replicas previously assigned to it
	// (Karmada's AvailableReplicas); selection and ordering use it.
	available int64
}

func (c *candidate) name() string { return c.cluster.Name }

// candidates scores and estimates the feasible clusters and orders them:
// overflow tier asc, score desc, available desc, name asc.
func candidates(in *Input, feasible []*Cluster, aff affinitySet) []candidate {
	prev := make(map[string]int64, len(in.Previous.Clusters))
	for _, t := range in.Previous.Clusters {
		prev[t.Name] += int64(t.Replicas)
	}
	out := make([]candidate, len(feasible))
	for i, c := range feasible {
		assigned, used := prev[c.Name]
		out[i] = candidate{cluster: c, overflow: aff.order(c), free: freeReplicas(c, &in.Workload)}
		if used {
			out[i].score = localityScore
		}
		out[i].available = out[i].free + assigned
	}
	slices.SortFunc(out, compareCandidates)
	return out
}

func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(a.overflow, b.overflow); c != 0 {
		return c
	}
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.available, a.available); c != 0 {
		return c
	}
	return cmp.Compare(a.name(), b.name())
}
