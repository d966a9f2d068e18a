package place

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/placement"
)

// Member is one member cluster as the loop sees it: the stored Cluster
// (labels, admin taints, topology, models), its lease (liveness, capacity,
// APIs) and the taints the lease implies.
type Member struct {
	// Cluster is the scheduler's view; APIEnabled is filled per workload
	// by BuildInput.
	Cluster placement.Cluster
	// APIs holds the served kinds as APIKey(groupVersion, kind).
	APIs map[string]bool
	// State is the lease state; "" when this hub has no lease for it.
	State lease.State
}

// Liveness says how leases turn into taints.
type Liveness struct {
	// GraceUntil ends the start-up grace: until then a cluster without a
	// lease (its agent has not reconnected since the hub started) keeps its
	// stored taints; from then on it counts as unreachable since
	// GraceUntil.
	GraceUntil time.Time
	// Disrupted is full-disruption mode (FullDisruption): no
	// unreachable:NoExecute taint at all, so nothing fails over.
	Disrupted bool
	// NoExecuteFloor is the earliest timeAdded of an unreachable:NoExecute
	// taint: the end of the last full disruption, so that tolerations
	// count only time the hub watched the cluster alone being away.
	NoExecuteFloor time.Time
}

// BuildMembers joins the stored clusters and their leases, sorted by name.
// Only stored (registered) clusters are members: a lease without a stored
// Cluster (an agent whose cluster is not registered, or not yet seen by the
// loop) is ignored, so that a cluster never gets work before the admin's
// labels and taints on it are known.
func BuildMembers(stored []clusterv1alpha1.Cluster, leases []lease.Lease, now time.Time, lv Liveness) []Member {
	byName := make(map[string]*lease.Lease, len(leases))
	for i := range leases {
		byName[leases[i].Cluster] = &leases[i]
	}
	out := make([]Member, 0, len(stored))
	for i := range stored {
		out = append(out, MemberOf(&stored[i], byName[stored[i].Name], now, lv))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster.Name < out[j].Cluster.Name })
	return out
}

// MemberOf builds one Member; l is nil when there is no lease.
func MemberOf(c *clusterv1alpha1.Cluster, l *lease.Lease, now time.Time, lv Liveness) Member {
	sc := placement.Cluster{
		Name:           c.Name,
		Labels:         c.Labels,
		Provider:       c.Spec.Provider,
		Region:         c.Spec.Region,
		Zone:           c.Spec.Zone,
		Zones:          c.Spec.Zones,
		ResourceModels: c.Spec.ResourceModels,
		Deleting:       c.DeletionTimestamp != nil,
	}
	m := Member{Cluster: sc, State: ""}
	st := c.Status
	if l != nil {
		m.State = l.State
		st = lease.ClusterStatus(st, l.Heartbeat)
		topology(&m.Cluster, l.Heartbeat.GetTopology())
	}
	m.Cluster.ResourceSummary = st.ResourceSummary
	m.APIs = apiSet(st.APIEnablements)
	m.Cluster.Taints = taints(c.Spec.Taints, l, now, lv)
	return m
}

// topology fills the properties the stored Cluster leaves empty from the
// agent's heartbeat.
func topology(c *placement.Cluster, t *agentv1.Topology) {
	if c.Provider == "" {
		c.Provider = t.GetProvider()
	}
	if c.Region == "" {
		c.Region = t.GetRegion()
	}
	if c.Zone == "" && len(c.Zones) == 0 {
		c.Zones = t.GetZones()
	}
}

// taints are the admin's taints with the liveness taints replaced by the
// ones the lease l implies, like Karmada's cluster controller
// (Ready=False: not-ready; Ready=Unknown: unreachable).
func taints(admin []corev1.Taint, l *lease.Lease, now time.Time, lv Liveness) []corev1.Taint {
	if l == nil && now.Before(lv.GraceUntil) {
		return admin
	}
	out := make([]corev1.Taint, 0, len(admin)+2)
	for _, t := range admin {
		if !livenessTaint(t.Key) {
			out = append(out, t)
		}
	}
	switch {
	case l == nil:
		out = append(out, unreachable(lv.GraceUntil, lv)...)
	case l.State == lease.StateNotReady:
		out = append(out, corev1.Taint{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: l.Since}})
	case l.State == lease.StateUnknown:
		out = append(out, unreachable(l.Since, lv)...)
	}
	return out
}

// unreachable is unreachable:NoSchedule since the cluster became
// unreachable and, outside full disruption, unreachable:NoExecute since
// then or the end of the last disruption, whichever is later. The NoExecute
// taint moves only the bindings that opt into failover (TaintEvictions).
func unreachable(since time.Time, lv Liveness) []corev1.Taint {
	out := []corev1.Taint{{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: since}}}
	if lv.Disrupted {
		return out
	}
	if since.Before(lv.NoExecuteFloor) {
		since = lv.NoExecuteFloor
	}
	return append(out, corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: since}})
}

func apiSet(in []clusterv1alpha1.APIEnablement) map[string]bool {
	out := make(map[string]bool)
	for _, e := range in {
		for _, r := range e.Resources {
			out[APIKey(e.GroupVersion, r.Kind)] = true
		}
	}
	return out
}

// APIKey names a served kind, e.g. "apps/v1, Kind=Deployment".
func APIKey(groupVersion, kind string) string { return groupVersion + ", Kind=" + kind }

// MemberIndex is a snapshot's members by name, built once per snapshot
// so that Step's lookups cost no allocation per binding.
type MemberIndex map[string]*Member

// IndexMembers indexes members (which it points into).
func IndexMembers(members []Member) MemberIndex {
	out := make(MemberIndex, len(members))
	for i := range members {
		out[members[i].Cluster.Name] = &members[i]
	}
	return out
}

// lookup returns the member named name.
func (x MemberIndex) lookup(name string) (*Member, bool) { m, ok := x[name]; return m, ok }

// Exists is placement.NeedsSchedule's exists: in the snapshot and not
// being deleted.
func (x MemberIndex) Exists(name string) bool { m, ok := x[name]; return ok && !m.Cluster.Deleting }
