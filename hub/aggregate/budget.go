package aggregate

import (
	"fmt"
	"time"

	"github.com/tetherproj/tether/hub/agentapi"
)

// Defaults of the per-cluster budget (Config.ClusterBudget): what one
// cluster's acks and reports may make this replica write (relayed records,
// or with Config.Local the records held in memory, each of which dirties
// its binding's status write). A cluster over its budget has its updates
// coalesced per work (the latest ack and report of each version kept) and
// written as the budget refills; its neighbours' are never held back.
const (
	// DefaultClusterRecordRate is records per second per cluster, with
	// bursts of DefaultClusterRecordBurst: an agent reports a work at most
	// every 2 s on change, so a rollout of a thousand works on one cluster
	// goes through in bursts, and a flood of changing reports is written
	// 50 times a second at most.
	DefaultClusterRecordRate  = 50
	DefaultClusterRecordBurst = 1000
	// DefaultClusterByteRate is bytes per second per cluster (protobuf of
	// the acks and reports written), with bursts of
	// DefaultClusterByteBurst: 256 KiB/s is under an hour of etcd history
	// (the embedded member compacts hourly) of 1 GiB for a cluster
	// flooding without pause, far less once coalesced.
	DefaultClusterByteRate  = 256 << 10
	DefaultClusterByteBurst = 4 << 20
	// DefaultMaxQueuedClusterBytes bounds one cluster's updates waiting
	// in the relay queue, a quarter of DefaultMaxQueuedBytes: past it only
	// that cluster's stream ends.
	DefaultMaxQueuedClusterBytes = 64 << 20
	// kindOverBudget counts updates left queued because their cluster was
	// over its budget, once per record per relay pass
	// (tether_hub_controller_errors_total{component="aggregate",kind="relay_over_budget"}).
	kindOverBudget = "relay_over_budget"
	// kindClusterQueueFull counts updates refused because their cluster's
	// share of the relay queue was full.
	kindClusterQueueFull = "relay_cluster_queue_full"
)

// ClusterBudget bounds what one cluster's agent makes this replica write;
// zero fields mean the defaults.
type ClusterBudget struct {
	// RecordRate and RecordBurst: records written per second, and at once.
	RecordRate  float64
	RecordBurst int
	// ByteRate and ByteBurst: protobuf bytes of acks and reports written
	// per second, and at once.
	ByteRate  float64
	ByteBurst int
	// MaxQueuedBytes: the most bytes of one cluster's updates waiting.
	MaxQueuedBytes int
}

func (b ClusterBudget) withDefaults() ClusterBudget {
	if b.RecordRate <= 0 {
		b.RecordRate = DefaultClusterRecordRate
	}
	if b.RecordBurst <= 0 {
		b.RecordBurst = DefaultClusterRecordBurst
	}
	if b.ByteRate <= 0 {
		b.ByteRate = DefaultClusterByteRate
	}
	if b.ByteBurst <= 0 {
		b.ByteBurst = DefaultClusterByteBurst
	}
	if b.MaxQueuedBytes <= 0 {
		b.MaxQueuedBytes = DefaultMaxQueuedClusterBytes
	}
	return b
}

// ErrClusterQueueFull: one cluster's share of the relay queue is full (its
// agent sends faster than its budget writes, with more distinct works or
// versions than coalescing absorbs). It wraps agentapi.ErrLimit: the
// stream of that cluster alone ends with Goodbye LIMIT_EXCEEDED; the agent
// reconnects and is asked again for what the hub lacks.
var ErrClusterQueueFull = fmt.Errorf("%w: cluster relay queue full", agentapi.ErrLimit)

// spend is one cluster's budget: two token buckets, refilled by wall
// time (pacing, not ordering). Guarded by Aggregator.mu.
type spend struct {
	records, bytes float64
	last           time.Time
	queued         int // bytes of this cluster's updates in the queue
}

// refill brings s's buckets up to now under b.
func (s *spend) refill(b ClusterBudget, now time.Time) {
	if s.last.IsZero() {
		s.records, s.bytes = float64(b.RecordBurst), float64(b.ByteBurst)
	} else if d := now.Sub(s.last).Seconds(); d > 0 {
		s.records = min(float64(b.RecordBurst), s.records+d*b.RecordRate)
		s.bytes = min(float64(b.ByteBurst), s.bytes+d*b.ByteRate)
	}
	s.last = now
}

// take spends one record of n bytes if the buckets are not empty (a record
// larger than what is left drives the byte bucket below zero: it waits
// for the refill before the next).
func (s *spend) take(n int) bool {
	if s.records < 1 || s.bytes <= 0 {
		return false
	}
	s.records--
	s.bytes -= float64(n)
	return true
}

// spendLocked is cluster's budget, refilled to now; a.mu must be held.
func (a *Aggregator) spendLocked(cluster string, now time.Time) *spend {
	s := a.spends[cluster]
	if s == nil {
		s = &spend{}
		a.spends[cluster] = s
	}
	s.refill(a.cfg.ClusterBudget, now)
	return s
}

// forgetSpendLocked drops cluster's budget once nothing of it is queued
// and its buckets are full again (a new one starts full); a.mu must be
// held.
func (a *Aggregator) forgetSpendLocked(cluster string) {
	s := a.spends[cluster]
	b := a.cfg.ClusterBudget
	if s != nil && s.queued <= 0 && s.records >= float64(b.RecordBurst) && s.bytes >= float64(b.ByteBurst) {
		delete(a.spends, cluster)
	}
}

// dropQueuedLocked drops cluster's queued updates and its budget; a.mu
// must be held.
func (a *Aggregator) dropQueuedLocked(cluster string) {
	q := &a.queue
	for ref, d := range q.deltas {
		if ref.cluster == cluster {
			q.bytes -= d.bytes
			delete(q.deltas, ref)
		}
	}
	delete(a.spends, cluster)
}

// takeBudgeted removes from the queue and returns the queued updates whose
// cluster has budget for them, in key order per cluster; the others stay
// queued (coalescing with what comes next), each counted.
func (a *Aggregator) takeBudgeted() map[workRef]*delta {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := &a.queue
	out := make(map[workRef]*delta)
	now := a.now()
	over := 0
	for _, ref := range sortedRefs(q.deltas) {
		d := q.deltas[ref]
		s := a.spendLocked(ref.cluster, now)
		if !s.take(d.bytes) {
			over++
			continue
		}
		out[ref] = d
		q.flushing++
		delete(q.deltas, ref)
		q.bytes -= d.bytes
		s.queued -= d.bytes
	}
	for i := 0; i < over; i++ {
		a.cfg.Counts.Add("aggregate", kindOverBudget)
	}
	for c := range a.spends {
		a.forgetSpendLocked(c)
	}
	if len(out) > 0 {
		q.full = false
	}
	return out
}

// sortedRefs returns the keys of m by cluster, then work key.
func sortedRefs(m map[workRef]*delta) []workRef {
	refs := make([]workRef, 0, len(m))
	for ref := range m {
		refs = append(refs, ref)
	}
	sortRefs(refs)
	return refs
}
