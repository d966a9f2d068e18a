package scheduler

import (
	"slices"
	"strings"
	"time"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
)

// memberCache keeps each member as the loop last built it, with what it
// was built from, so that a refresh rebuilds only the clusters whose
// stored record or lease changed: with 1,000 clusters, rebuilding every
// member (parsing its capacity and APIs) on every lease change was most of
// the loop's time while agents connected. It builds what BuildMembers
// builds.
type memberCache struct {
	lv      place.Liveness
	inGrace bool // now was before lv.GraceUntil
	by      map[string]cachedMember
}

// cachedMember is one member and what it was built from.
type cachedMember struct {
	from memberSource
	m    place.Member
}

// memberSource is what a member is built from besides the Liveness: the
// stored Cluster's generation (Loop.storedGen) and the lease.
type memberSource struct {
	gen    uint64
	leased bool
	state  lease.State
	since  time.Time
	beat   *agentv1.Heartbeat // hub/liveness replaces it, never modifies it
}

// build is BuildMembers(stored, leases, now, lv), with the members whose
// sources did not change taken from the cache. rebuilt names the members
// built again; nil when all were.
func (c *memberCache) build(stored []clusterv1alpha1.Cluster, gens map[string]uint64, leases []lease.Lease, now time.Time, lv place.Liveness) (out []place.Member, rebuilt map[string]bool) {
	inGrace := now.Before(lv.GraceUntil)
	all := c.by == nil || inGrace != c.inGrace || !sameLiveness(lv, c.lv)
	byName := make(map[string]*lease.Lease, len(leases))
	for i := range leases {
		byName[leases[i].Cluster] = &leases[i]
	}
	next := make(map[string]cachedMember, len(stored))
	out = make([]place.Member, 0, len(stored))
	rebuilt = map[string]bool{}
	for i := range stored {
		s := &stored[i]
		lease := byName[s.Name]
		from := memberSource{gen: gens[s.Name]}
		if lease != nil {
			from.leased, from.state, from.since, from.beat = true, lease.State, lease.Since, lease.Heartbeat
		}
		cm, ok := c.by[s.Name]
		if all || !ok || cm.from != from {
			cm = cachedMember{from: from, m: place.MemberOf(s, lease, now, lv)}
			rebuilt[s.Name] = true
		}
		next[s.Name] = cm
		out = append(out, cm.m)
	}
	byClusterName := func(a, b place.Member) int { return strings.Compare(a.Cluster.Name, b.Cluster.Name) }
	if !slices.IsSortedFunc(out, byClusterName) { // the loop passes stored sorted
		slices.SortFunc(out, byClusterName)
	}
	c.by, c.lv, c.inGrace = next, lv, inGrace
	if all {
		return out, nil
	}
	return out, rebuilt
}

func sameLiveness(a, b place.Liveness) bool {
	return a.Disrupted == b.Disrupted && a.GraceUntil.Equal(b.GraceUntil) && a.NoExecuteFloor.Equal(b.NoExecuteFloor)
}
