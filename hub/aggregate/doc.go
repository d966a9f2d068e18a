// Package aggregate is the hub's status aggregator (DESIGN §1 step 6): it
// receives what agents report about their works (it implements
// agentapi.Statuses), folds it per binding into one aggregated status item
// per cluster, runs the interpreter's AggregateStatus over those items to
// get the template's status, and writes both to the binding.
//
// # Usage
//
//	agg := aggregate.New(fenced, interp, leases, aggregate.Config{Relay: st, Replica: name}, logger)
//	srv, err := agentapi.New(cfg, works, agg /* Statuses */, heartbeats, logger)
//	go agg.Relay(ctx) // every replica: acks and reports → etcd → every replica's memory
//	go agg.Run(ctx)   // leader only: memory → bindings; returns nil when ctx ends
//	go agg.Prune(ctx) // leader only: removed clusters' relayed records deleted (Local: forgotten)
//
// Ack, Report and Digests only touch memory and never block on I/O, so
// they may be called from every agent stream while Relay and Run write.
//
// Observed reads, per cluster, what is held of a binding's works as its
// items read it, with the version it is of: the rollout loop (hub/rollout)
// gates on it.
//
// # Several replicas: the relay
//
// An agent streams to one replica, but only the leader runs Run, and a
// reconnecting agent may land on any replica. So what agents send does not
// go to memory directly: Ack and Report queue it, and Relay writes it to
// etcd, one record per (cluster, work) at
// /tether/reports/<cluster>/<work key> holding the last ack and the last
// report (with the version of the newest, the superseded versions, and
// when each was received). Relay also follows that prefix (a list in
// pages of 256 records at one revision, then a watch from it; a compacted
// watch lists again) into memory on every replica, so the leader's Run
// aggregates every cluster and Digests on any replica, restarted or not,
// knows what is held: a reconnecting agent is asked only for statuses the
// hub lacks. A single hub does the same through its embedded etcd: one
// path.
//
// The relayed records are not in the replica's view (hub/view), and Relay
// and Prune keep their own list and watch (store.Follow, with the view's
// view.RelistBackoff): a view holding them would keep each record as an
// Object with its decoded value on every replica, several times what
// this package holds of it (BenchmarkReportsInView against
// BenchmarkHeldMemory), and they are written as fast as agents ack, each
// write decoded under the lock every reader of the view shares.
//
// # One replica: memory only
//
// A hub on its embedded etcd is the only replica (Config.Local): Ack and
// Report merge what they receive into memory at once (the same merge as
// for relayed records), nothing is written under /tether/reports/, and
// Relay only deletes the records an earlier, relaying hub left there
// (nothing would follow or update them). The store holds what agents
// report only in the bindings' aggregated statuses: its keys grow with
// templates and clusters, not with their product (a million works would
// otherwise be a million records, written through etcd as fast as agents
// ack). A restarted single hub holds nothing: a reconnecting agent is
// asked for every status it reported (DESIGN §5, the hub asks for what it
// lacks), and until it answers the bindings keep the items they had.
// Prune forgets a removed cluster's works from memory.
//
// What is held of an ack or report is trimmed (its version, result,
// digest and the template's manifest, without its identity) and kept in
// the work's record, not as protobuf messages nor with the work's key
// again (held.go; BuildItems gets them as messages again, per binding,
// when it is flushed). Records that hold the same ack and report (a
// template Duplicated to many clusters is acked and reported the same in
// most) share it through unique.Make: a record keeps a handle, the times
// it received them and its superseded versions, and a handle of its work
// and binding keys, shared by the work's records in every cluster: 80
// bytes. BenchmarkHeldMemory measures the heap per held work, maps
// included: 760 B before issue 16's changes, 320 B when each record held
// its own ack and report, 215 B shared, 184 B with the keys shared too.
//
// These records are agents' data, not decisions: Relay writes them
// unfenced (Config.Relay), whichever replica holds the stream. Updates
// queued for one work coalesce (the last ack and report per version,
// merge-equivalent) and are written at most every 100 ms, in transactions
// of up to 64 records and 1 MiB, each record conditional on the revision
// this replica last saw; a record another replica wrote meanwhile is read
// back and merged again. Merging keeps the newer: an update of a version
// the work moved past is discarded, and so is one received before what the
// record holds (another version, or the same kind of message), and one
// that changes nothing held is not written at all. "Before" compares
// receipt orders, never clocks (update.ord, nextOrdLocked): the store
// revision the receiving replica had seen, then the order of receipt on
// that replica, each order above every one held of the cluster. It
// matters only when a cluster's stream moved between replicas while one
// of them had not written yet: the late write loses to the newer stream's
// (or, when neither replica had seen anything the other had not, to
// whichever was written first), whatever the replicas' clocks say.
//
// Cost: agents report on change, so etcd gets one put (a few KiB for a
// Deployment) per work whose ack or status changed, at most one per work
// per 100 ms, batched; every replica holds every record in memory, as the
// leader's aggregator must.
//
// Bounds: a relayed report keeps only the template's manifest (what the
// items read) and an ack no per-object results and a message of at most
// agentapi.MaxManifestMessageBytes; either over 96 KiB is refused
// (counted as a refused report). At most Config.MaxQueued works (default
// 100,000) and Config.MaxQueuedBytes (default 256 MiB) wait to be
// relayed; past that Ack and Report fail with ErrQueueFull (counted as
// relay_queue_full, logged once until the queue drains), which ends the
// stream: the agent reconnects, sends its digests and is asked again for
// what the hub lacks. Updates still queued when Relay stops are written
// within 2 s or lost the same way.
//
// One agent cannot fill etcd nor crowd out its neighbours: each cluster
// has a budget (Config.ClusterBudget: by default 50 records and 256 KiB a
// second, bursts of 1,000 and 4 MiB) of what its updates make this
// replica write, relayed records or, with Config.Local, records held in
// memory (each dirties its binding's status write). A cluster over it has
// its updates left queued, coalesced per work to the latest, and written
// as the budget refills (counted as relay_over_budget); the other clusters'
// are written as before. A cluster's updates waiting may take at most
// ClusterBudget.MaxQueuedBytes (64 MiB); past that only its Ack and Report
// fail, with ErrClusterQueueFull, an agentapi.ErrLimit: its stream alone
// ends with Goodbye LIMIT_EXCEEDED naming the limit.
//
// An ack with result DELETED deletes the record. Prune (leader, fenced)
// deletes the records of removed clusters (their agent record is a
// tombstone), when it starts and as removals or late records appear. A
// record is of the size of the binding's item for that cluster: the
// records grow with bindings × their clusters, as the bindings' items do.
//
// # Bindings and templates: the view
//
// Run follows the bindings in the replica's view (Config.View, hub/view)
// and reads the templates from it: it opens no watch of its own and
// decodes no binding as it changes; the view's relist policy is its own.
// The view's bindings carry no aggregated status items, and Run keeps
// none: every item of a cluster something is held for is built from the
// records at every flush. A binding whose stored encoding Run does not
// know (another writer changed it) or that has an item of a cluster
// nothing is held for (a restarted single hub, a store restored: the item
// is kept as written until the agent reports) is read whole from the
// store when it is flushed, and dropped again (entry.keeps;
// BenchmarkRestartHeap measures a restarted hub's aggregator).
//
// # What the hub holds
//
// Report refuses (agentapi.ErrInvalidReport) a report that fails
// agentapi.ValidateStatusReport, whoever calls it, and so does the
// follower for a stored record, so agent data never reaches a binding's
// encoding unchecked; a panic while writing one binding is recovered,
// logged, counted (Config.Counts) and that binding skipped until its next
// change.
//
// Per (cluster, work key): the last ack and the last status report, and the
// version of the newest of the two. Acks and reports of a version the work
// already moved past are discarded (agentapi filters those too); an ack
// with result DELETED forgets the work. Config.BindingOf maps a work key to
// its binding (one work per binding and cluster); the default reads keys
// of the form "<group>/<Kind>/<namespace|_>/<name>". Digests returns the
// digest of each held report, so a reconnecting agent is asked only for
// the statuses the hub lacks. Memory holds what etcd holds (the leader
// also forgets the records of deleted bindings); after a restart the
// relayed records are read back, and agents re-send nothing the hub had
// (a single hub, which relays nothing, asks for them again).
//
// # What is written (the binding's status and annotations)
//
//   - status.aggregatedStatus: one item per cluster holding a work of the
//     binding (spec.clusters, clusters being gracefully evicted, and for a
//     dependency binding the clusters of the bindings requiring it), sorted
//     by cluster: {clusterName, applied, appliedMessage, health, status}.
//     applied/appliedMessage come from the ack of the latest version (else
//     the template's manifest in the report); status is the template's
//     manifest status as the agent reflected it; health is the agent's
//     verdict, and an object the agent could not judge counts as Healthy
//     when it is applied and the interpreter has no InterpretHealth hook for
//     the kind (interpreter spec §2). A cluster that has not reported yet
//     has health Unknown. A cluster for which no relayed record is held
//     keeps its item as written (a store restored without them).
//   - annotation status.tether.io/template-status: the JSON of the
//     template's .status, i.e. the .status of AggregateStatus(template,
//     items), computed with the template's .status set to the previous
//     aggregated status (as Karmada aggregates onto the template). Only
//     .status is kept. Absent when the kind has no AggregateStatus hook.
//     The client API merges it into the template's .status on Get
//     (fold.MergeInto); the stored template itself is never written, so user
//     applies never conflict with status and the detector (which follows
//     template revisions) is not woken by status changes.
//   - annotation status.tether.io/stale-clusters: JSON list of the clusters
//     whose items are stale.
//   - annotation status.tether.io/status-truncated, only when the binding
//     would be larger than maxBindingBytes (1 MiB, under etcd's request
//     limit): the largest items' statuses, then applied messages, are left
//     out until it fits, and the annotation says how many (encodeBounded);
//     every cluster keeps its item, health and applied, and the template
//     status is aggregated from every status before. The write never
//     fails for the statuses' size.
//
// Annotations rather than status fields because api/work/v1alpha1 has no
// field for them and the detector rewrites bindings through that type
// (unknown status fields would be lost, annotations are kept). Unchanged
// condition timestamps in the template status are kept, so aggregations
// that stamp "now" (Job) do not cause writes.
//
// # Items after a change of assignment
//
// An item's health is the agent's verdict on the version it last acked or
// reported: a report older than a later ack gives health Unknown (its
// status is kept). When a binding's write gives a target cluster other
// replicas (or a new target), its item counts as Unknown until the agent
// observes a newer version than the one it held then, or the assignment
// returns to what it was. So graceful eviction (hub/scheduler) waits for
// the replacement replicas' own status, not for the old assignment's.
// "Then" is the binding write's revision, not the moment Run sees it: an
// agent may answer the new version first. Every update is stamped with
// the highest store revision its replica had read when it arrived
// (store.Store.Seen, which the renderer's list and watch raise before it
// renders); a version first received with a stamp below the write's
// revision was held then, one received later may answer it. The held
// record keeps the stamp of its version and of the superseded ones.
//
// # Stale clusters
//
// A cluster is stale while its lease is Unknown (hub/liveness), or when it
// has no lease once the start-up grace (Config.StartupGrace, default the
// lease duration plus protocol.MaxReconnectDelay, the longest an agent
// waits before it reconnects) after Run started is over. Its items are then: health
// Unknown (never Healthy), status removed, applied and appliedMessage kept
// as last reported, and the cluster listed in stale-clusters. Because the
// status is removed from the item, AggregateStatus skips it: the template's
// status counts none of that cluster's replicas (not replicas, not
// readyReplicas, not availableReplicas), and for Deployment-like kinds
// observedGeneration does not advance (a nil-status item counts in the
// number of items but never qualifies, interpreter spec §8.4). Graceful
// eviction (hub/scheduler) therefore never sees a stale cluster as
// healthy. A stale item of a cluster for which no relayed record is held
// stays stale until its agent reports again.
//
// # Writes
//
// A binding is written at most once per Config.FlushInterval (default 200
// ms, wall clock) and only when its items or annotations changed, with
// optimistic concurrency (a conflict re-reads and recomputes). A large
// binding is written at most once per interval for every 16 KiB of its
// encoding (one on 1,000 clusters, about 150 KiB, every 1.8 s at most):
// each write is decoded by the view of every replica of the hub, so
// its status follows a little later rather than costing the hub in
// proportion to bindings × clusters × changes. One flush
// pass prepares the dirty bindings' items in turn, then reads their
// templates, aggregates and writes them flushWorkers (16) at a time: etcd
// commits concurrent writes together, so a rollout that dirties a hundred
// bindings costs a few round trips per pass rather than two per binding in
// turn. Restarting the aggregator writes nothing while nothing changed.
//
// With an interpreter that answers webhook calls in the background
// (interpreter.Deferred, as the hub runs it), a template status a webhook
// aggregates does not hold the loop: the binding is written with its
// previous template status, and flushed again when the answer arrives.
//
// It imports hub/store, hub/view, hub/liveness, hub/pipeline/lease, hub/agentapi (the
// interface it implements), hub/aggregate/fold, hub/guard, hub/syncstate, api/,
// internal/interpreter's ErrPending, internal/protocol, the etcd client (for
// the relay's batched conditional writes), protobuf and Kubernetes API
// machinery; the interpreter comes in through the Interpreter interface.
package aggregate
