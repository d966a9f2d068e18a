package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

// storedClusters reads every registered cluster, with its revision as
// metadata.resourceVersion. The value at
// store.ClusterKey(name) is the JSON of a cluster.tether.io Cluster (spec:
// topology, taints, resource models; status: API enablements, resource
// summary, conditions).
func (b *backend) storedClusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error) {
	cs, _, err := readClusters(ctx, b.st)
	return cs, err
}

// readClusters is storedClusters and the store's revision it read them
// at.
func readClusters(ctx context.Context, st *store.Store) ([]clusterv1alpha1.Cluster, int64, error) {
	kvs, rev, err := st.List(ctx, store.ClustersPrefix)
	if err != nil {
		return nil, 0, err
	}
	out := make([]clusterv1alpha1.Cluster, 0, len(kvs))
	for _, kv := range kvs {
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(kv.Value, &c); err != nil {
			return nil, 0, fmt.Errorf("decode %s: %w", kv.Key, err)
		}
		c.ResourceVersion = strconv.FormatInt(kv.Revision, 10)
		out = append(out, c)
	}
	return out, rev, nil
}

// notYet is a start-up grace that never ends: with it, BuildMembers keeps
// the stored taints of a cluster without a lease.
var notYet = time.Unix(1<<62, 0)

// members is the scheduling loop's view of cs (place.BuildMembers):
// with live leases, each cluster's liveness taints, capacity and APIs come
// from its lease, and a cluster without one counts as unreachable from now
// on (as after the loop's start-up grace). Without leases (Config.Leases
// nil, or clusters given to Simulate, which no agent reports on) each
// cluster is taken as stored.
func (b *backend) members(cs []clusterv1alpha1.Cluster, live bool, now time.Time) []place.Member {
	if !live || b.cfg.Leases == nil {
		return place.BuildMembers(cs, nil, now, place.Liveness{GraceUntil: notYet})
	}
	var leases []lease.Lease
	for i := range cs {
		if l, ok := b.cfg.Leases.Get(cs[i].Name); ok {
			leases = append(leases, l)
		}
	}
	return place.BuildMembers(cs, leases, now, place.Liveness{GraceUntil: now})
}

// rejectionsOf converts the clusters the scheduler turned down, from its
// result or its FitError.
func rejectionsOf(res placement.Result, err error) []*hubv1.ClusterRejection {
	rejected := res.Rejected
	var fit *placement.FitError
	if errors.As(err, &fit) {
		rejected = fit.Rejected
	}
	var out []*hubv1.ClusterRejection
	for _, r := range rejected {
		out = append(out, &hubv1.ClusterRejection{Cluster: r.Cluster, Reasons: slices.Clone(r.Reasons)})
	}
	return out
}

// rejections runs the scheduler on in and returns why each cluster outside
// chosen was turned down; nothing when scheduling fails for capacity
// (which names no cluster).
func rejections(in placement.Input, chosen []string) []*hubv1.ClusterRejection {
	var out []*hubv1.ClusterRejection
	for _, r := range rejectionsOf(placement.Schedule(in)) {
		if !slices.Contains(chosen, r.Cluster) {
			out = append(out, r)
		}
	}
	return out
}
