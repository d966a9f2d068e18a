// Package liveness keeps the hub's view of its member clusters' liveness:
// one lease per cluster, renewed by every Heartbeat an agent sends on its
// stream (DESIGN §5), with the capacity and conditions it carried.
//
// A cluster is Ready (or NotReady, when the agent reports its "Ready"
// condition False) while its lease is valid, and becomes Unknown once the
// lease duration (protocol.LeaseDuration by default) passes without a
// heartbeat. Run expires leases; Heartbeat renews them. Time comes from a
// Clock, so tests drive expiry with a fake clock instead of sleeping.
//
// # Pauses
//
// A hub that was not running for a while (SIGSTOP, a VM pause, a long
// stall) would find every lease run out at once on resuming, before it has
// read the heartbeats its agents sent meanwhile. Run therefore wakes every
// second; when it wakes more than Config.PauseThreshold (default 5 s) late,
// it holds every expiry for one lease duration from the resume (Pauses
// reports it). A lease turns Unknown with Since set to when the hub saw it
// run out, so time the hub did not watch never counts toward a toleration.
//
// # Consumers
//
// The scheduler and the aggregator read List and block on Wait, like a
// nomad blocking query:
//
//	rev := uint64(0)
//	for {
//		rev, err = leases.Wait(ctx, rev) // returns after the next change
//		...
//		for _, l := range leases.List() { ... l.State ... }
//	}
//
// The revision moves when a cluster's state changes and when a heartbeat
// carries different capacity or conditions; a heartbeat that only renews the
// lease does not wake anyone.
//
// # Several replicas
//
// An agent streams to one hub replica, but the leader's scheduler and
// every replica's API need every cluster's liveness. So the heartbeats do
// not go to the replica's Leases alone: hub/agentapi hands them to the
// replica's Publisher, which writes them to etcd (/tether/liveness/, under
// an etcd lease of the replica), and every replica's Leases is fed by
// Follow, a watch of those records. The heartbeat's content is written only when it
// changes; a renewal of under 150 bytes is written at once when the
// cluster's state changes and otherwise every PublisherConfig.Refresh
// (default a quarter of the lease duration), in batched transactions, so
// 10,000 clusters cost about 500-1,000 small puts (about 100 KB) a second
// in 5-10 transactions, not one write per heartbeat. A single hub does the
// same through its embedded etcd.
//
// The heartbeats of a replica's own streams also renew their clusters'
// leases in its own Leases at once, with their content
// (PublisherConfig.Local), and Follow skips the records that replica
// writes (applied already: read back later, they would put older content
// over newer). The streams it holds back unread keep their leases valid
// too (Publisher.Touch, called by hub/agentapi while a stream waits for
// the works to be ready or for its Hello to be read). A hub starved of CPU
// can take longer than a lease to commit the records and read them back,
// or, after a restart, to write a first record for each of its clusters,
// and must not lose the clusters it is connected to for that.
//
// No replica's clock orders another's records. A record Follow finds by
// listing (at start, after a broken or compacted watch) is dated when
// this replica first saw that revision of it (follower.firstSeen), by its
// own clock: one seen a lease duration ago renews nothing, one seen
// before the heartbeat a lease holds changes nothing, a new one counts
// from now. The time a record carries (beat.At, kept for replicas of the
// previous release, which read it) is read only in this replica's own
// records. So that a new revision found by listing is never old, a
// Publisher deletes (Publisher.sweep) the records of a cluster it has
// written no renewal for in a lease duration, by its own clock; a dead
// replica's records go with its etcd lease.
//
// # Bounds
//
// What one agent makes the hub write is bounded per cluster. A cluster's
// heartbeat record is written at most once per
// PublisherConfig.ContentInterval (default 10 s) however often its content
// (API list, capacity) changes: the latest content waits and is written
// once the interval has passed, while renewals naming the content last
// written go on as before. A state change (Ready, NotReady) is written at
// once, unless another one already was within the interval. The
// registrar (hub/membership), which copies the API list into
// /tether/clusters/<name>, follows these records, so it writes no more
// often. A heartbeat may hold at most
// HeartbeatLimits (default 512 KiB encoded and 10,000 API entries: group
// versions plus resources): CheckHeartbeat says why one is past them, and
// hub/agentapi ends the stream of an agent that sends one; the Publisher
// never writes one (it renews the lease with the content last written).
// One transaction holds at most 1 MiB of records, so large heartbeats of
// many clusters never make a batch too large for all of them. None of this
// makes a lease run out sooner; a lease renewed by content that waited may
// run out up to ContentInterval later.
//
// Leases themselves stay in memory: expiry, the pause hold and Since are
// each replica's own, by its own clock. A record going away (its replica
// stopped or died) only stops the renewals; the lease then runs out as
// above, and nothing is deleted because of it. Persisting the last
// capacity under /tether/clusters/<name> is hub/membership's business.
//
// Lease and State are hub/pipeline/lease's, named here too. What a
// heartbeat says of a cluster becomes the cluster's status in one place,
// hub/pipeline/lease's ClusterStatus: the client API shows it, the
// scheduler places by it, and hub/membership records API enablements with
// its APIEnablements.
//
// It imports the generated agent protocol, hub/pipeline/lease, hub/store,
// internal/protocol, the etcd client, protobuf, go-hclog and the standard
// library.
package liveness
