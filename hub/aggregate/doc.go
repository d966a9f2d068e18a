// Package aggregate is the hub's status aggregator (DESIGN §1 step 6): it
// receives what agents report about their works (it implements
// agentapi.Statuses), folds it per binding into one aggregated status item
// per cluster, runs the interpreter's AggregateStatus over those items to
// get the template's status, and writes both to the binding.
//
// # Usage
//
//	agg := aggregate.New(st, interp, leases, aggregate.Config{BindingOf: render.BindingOf}, logger)
//	srv := agentapi.NewServer(..., agg /* Statuses */, leases, ...)
//	err := agg.Run(ctx) // leader only; returns nil when ctx ends
//
// Ack, Report and Digests only touch memory and never block on I/O, so
// they may be called from every agent stream while Run writes. Run must be
// running for anything to be written.
//
// # What the hub holds
//
// Report refuses (agentapi.ErrInvalidReport) a report that fails
// agentapi.ValidateStatusReport, whoever calls it, so agent data never
// reaches a binding's encoding unchecked; a panic while writing one
// binding is recovered, logged, counted (Config.Counts) and that binding
// skipped until its next change.
//
// Per (cluster, work key): the last ack and the last status report, and the
// version of the newest of the two. Acks and reports of a version the work
// already moved past are discarded (agentapi filters those too); an ack
// with result DELETED forgets the work. Config.BindingOf maps a work key to
// its binding (one work per binding and cluster); the default reads keys
// of the form "<group>/<Kind>/<namespace|_>/<name>". Digests returns the
// digest of each held report, so a reconnecting agent is asked only for
// the statuses the hub lacks. This memory is per hub process: after a
// restart the hub holds no digest and agents re-send each status once.
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
//     has health Unknown. After a hub restart, a cluster's item is kept as
//     written until its agent reports again.
//   - annotation status.tether.io/template-status: the JSON of the
//     template's .status, i.e. the .status of AggregateStatus(template,
//     items), computed with the template's .status set to the previous
//     aggregated status (as Karmada aggregates onto the template). Only
//     .status is kept. Absent when the kind has no AggregateStatus hook.
//     The client API merges it into the template's .status on Get
//     (MergeInto); the stored template itself is never written, so user
//     applies never conflict with status and the detector (which follows
//     template revisions) is not woken by status changes.
//   - annotation status.tether.io/stale-clusters: JSON list of the clusters
//     whose items are stale.
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
// returns to what it was. So graceful eviction (hub/schedloop) waits for
// the replacement replicas' own status, not for the old assignment's.
//
// # Stale clusters
//
// A cluster is stale while its lease is Unknown (hub/clusters), or when it
// has no lease once the start-up grace (Config.StartupGrace, default the
// lease duration) after Run started is over. Its items are then: health
// Unknown (never Healthy), status removed, applied and appliedMessage kept
// as last reported, and the cluster listed in stale-clusters. Because the
// status is removed from the item, AggregateStatus skips it: the template's
// status counts none of that cluster's replicas (not replicas, not
// readyReplicas, not availableReplicas), and for Deployment-like kinds
// observedGeneration does not advance (a nil-status item counts in the
// number of items but never qualifies, interpreter spec §8.4). Graceful
// eviction (hub/schedloop) therefore never sees a stale cluster as
// healthy. A stale item carried over a hub restart stays stale until its
// agent reports again.
//
// # Writes
//
// A binding is written at most once per Config.FlushInterval (default 200
// ms, wall clock) and only when its items or annotations changed, with
// optimistic concurrency (a conflict re-reads and recomputes). Restarting
// the aggregator writes nothing while nothing changed.
//
// It imports hub/store, hub/clusters, hub/agentapi (the interface it
// implements), hub/syncstate, api/ and Kubernetes API machinery; the
// interpreter comes in through the Interpreter interface.
package aggregate
