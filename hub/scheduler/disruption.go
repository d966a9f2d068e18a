package scheduler

import (
	"context"
	"errors"
	"time"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
)

// Full disruption, after the Kubernetes node lifecycle controller's
// --unhealthy-zone-threshold: when this many clusters are unreachable at
// the same time, the likelier cause is on the hub's side (its network, its
// load balancer, its serving certificate, a pause), and failing over would
// move the whole fleet for nothing.
const (
	// DisruptionThreshold is the share of registered clusters (0.55 =
	// 55 %) that, unreachable together, puts the loop in full disruption.
	DisruptionThreshold = 0.55
	// DisruptionMinClusters is the fewest unreachable clusters that can
	// make a full disruption: one cluster alone away is a partition of that
	// cluster, however small the fleet.
	DisruptionMinClusters = 2
)

// Census counts the registered clusters that are not being deleted, and
// those of them that are unreachable: their lease is Unknown, or they have
// none once the start-up grace has ended (within it, a cluster without a
// lease is not known to be away).
func Census(stored []clusterv1alpha1.Cluster, leases []lease.Lease, now, graceUntil time.Time) (unreachable, total int) {
	state := make(map[string]lease.State, len(leases))
	for _, l := range leases {
		state[l.Cluster] = l.State
	}
	for i := range stored {
		if stored[i].DeletionTimestamp != nil {
			continue
		}
		total++
		st, ok := state[stored[i].Name]
		if st == lease.StateUnknown || (!ok && !now.Before(graceUntil)) {
			unreachable++
		}
	}
	return unreachable, total
}

// FullDisruption reports whether unreachable of total clusters is a full
// disruption: at least DisruptionMinClusters and at least
// DisruptionThreshold of them.
func FullDisruption(unreachable, total int) bool {
	return unreachable >= DisruptionMinClusters && float64(unreachable) >= DisruptionThreshold*float64(total)
}

// setDisruption records the mode decided from a census, logging changes.
// Leaving it moves the NoExecute floor to now: a cluster still away then
// has its tolerations counted from now.
func (l *Loop) setDisruption(on bool, unreachable, total int, now time.Time) {
	if on == l.disrupted.Load() {
		return
	}
	l.disrupted.Store(on)
	if on {
		l.log.Warn("full disruption: too many clusters unreachable at once; no failover until most are back",
			"unreachable", unreachable, "clusters", total, "threshold", DisruptionThreshold)
		return
	}
	l.noExecuteFloor, l.floorUnsaved = now, true
	l.log.Info("full disruption over; unreachable clusters count their tolerations from now",
		"unreachable", unreachable, "clusters", total)
}

// Disrupted reports whether the loop is in full disruption mode (for the
// hub's metrics); safe for concurrent use.
func (l *Loop) Disrupted() bool { return l.disrupted.Load() }

// saveFloor stores the NoExecute floor once it moved (store.NoExecuteFloorKey),
// so that the next leader does not count tolerations from before it: with
// no floor, a cluster still away when a disruption ended would fail over as
// if the disruption had counted. A failed write is tried again at the next
// pass.
func (l *Loop) saveFloor(ctx context.Context) {
	if !l.floorUnsaved {
		return
	}
	at := l.noExecuteFloor.UTC().Format(time.RFC3339Nano)
	if _, err := l.store.Put(ctx, store.NoExecuteFloorKey, []byte(at)); err != nil {
		if !errors.Is(err, context.Canceled) {
			l.log.Warn("the end of the full disruption not stored; trying again", "error", err)
		}
		return
	}
	l.floorUnsaved = false
}

// loadFloor raises the NoExecute floor to the one stored, if later: the
// end of a full disruption another leader saw. A floor that cannot be read
// is an error (the loop lists again); one that does not decode is ignored
// with a warning.
func (l *Loop) loadFloor(ctx context.Context) error {
	kv, err := l.store.Get(ctx, store.NoExecuteFloorKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339Nano, string(kv.Value))
	if err != nil {
		l.log.Warn("stored end of the last full disruption not decodable, ignored", "key", store.NoExecuteFloorKey, "error", err)
		return nil
	}
	if at.After(l.noExecuteFloor) {
		l.noExecuteFloor = at
	}
	return nil
}
