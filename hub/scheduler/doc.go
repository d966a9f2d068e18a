// Package scheduler is the hub's scheduling loop, the task hub.Run names
// "scheduler": it follows bindings and registered clusters in the
// replica's view of the store (hub/view) and cluster leases, decides which bindings need (re)scheduling, runs the pure
// hub/placement.Schedule on them, and writes the result back to the
// binding with optimistic concurrency. It also plays
// Karmada's taint manager (NoExecute failover) and graceful eviction
// controller for the bindings it schedules.
//
// Losing contact with a cluster never deletes anything by itself (DESIGN
// §4, "What never deletes"): see "Unreachable clusters" below.
//
// # Usage
//
//	leases := liveness.New(liveness.Config{})
//	loop := scheduler.New(st, v, leases, scheduler.Config{}, logger) // v: the replica's *view.View
//	err := loop.Run(ctx) // returns nil when ctx ends; loads anew on each full batch of the view
//
// It caches the view's bindings as they are (shared, without their
// aggregated status items) and reads a binding whole from the store only
// when Step reads its items (graceful eviction tasks, application
// failover); a write of a binding decided without them puts back the
// items stored at the revision it updates, so that it never drops what
// hub/aggregate wrote.
//
// Its logger is named "schedloop", the package's former name, kept so that
// log queries written for earlier releases still match.
//
// The hub runs it only while its replica leads (hub.Run, hub/leader), on
// a store view fenced by that leadership (store.Store.Fenced): a deposed
// leader's writes fail with store.ErrNotLeader. Pure parts, each table
// tested: Census and FullDisruption, BuildMembers (clusters + leases → the
// scheduler's clusters and their taints), BuildInput, FailsOver,
// Tolerations, Returned, TaintEvictions, ApplicationEvictions, AssessTasks,
// and Step, which composes them with hub/placement's NeedsSchedule (spec
// §3) for one binding. The client API's Simulate runs Step too, on the
// template's would-be binding, and its placement query BuildInput.
//
// # When a binding is scheduled (placement.NeedsSchedule, scheduler spec §3)
//
// In order, the first that holds: never scheduled (no applied-placement
// record); placement changed against the applied one (for
// clusterAffinities only the observed term); assigned replicas do not add
// up to spec.replicas (Divided) or differ from it (explicit Duplicated);
// rescheduleTriggeredAt later than lastScheduledTime; Duplicated or
// non-workload (replicas 0) bindings on every change of a binding or of
// the cluster snapshot; a target cluster being deleted or gone from the
// snapshot (Tether adds "gone": a removed Cluster with no lease). A Divided
// binding is not rebalanced when clusters come, go or change capacity, as in
// Karmada. A change of a cluster is looked at only by the bindings it can
// concern (concerns): those naming it (a target, an eviction task's
// cluster), and those scheduled again on such a change whose placement's
// affinity admits it before or after (placement.Admits: Karmada's
// scheduler requeues likewise); a binding whose last scheduling failed is
// concerned by every change (its message counts all clusters). A change
// of nothing but capacity (the resource summaries of the heartbeats, which
// change constantly while pods start) is looked at only by those of them
// it can concern (placement.CapacityBound): those waiting to be
// scheduled, and those following every cluster change whose placement
// reads capacity (placement.ReadsCapacity: spread constraints, overflow
// affinities). The loop takes in the events already waiting together (up
// to maxBatch) and builds one snapshot for them, so clusters joining
// together cost one pass. A write of nothing but what hub/aggregate records
// on a binding (aggregated status, template status: placement.AggregateOnly;
// several writes per binding while its replicas get ready) is looked at
// only when the loop reads that status: the binding has a graceful
// eviction task, application failover or a rebalance in progress. Dependency bindings (nil
// placement), bindings of another scheduler and bindings with
// spec.suspension.scheduling are skipped.
//
// A decision that yields what the binding already holds (same targets,
// applied placement, observed term and Scheduled condition) writes nothing,
// so re-evaluating Duplicated bindings and restarting the loop never write.
// A pass decides every binding it looks at in key order, each decision
// counted at once in the works per cluster (Config.MaxWorks) of the ones
// after it, then writes the changed bindings together, up to maxInFlight
// at once (writeAll); a write that conflicts is read again and decided
// again on its own.
//
// # What is written
//
//   - spec.clusters: the result sorted by name (cleared on a FitError, kept
//     on other errors, spec §4.10).
//   - annotation policy.tether.io/applied-placement: JSON of the placement
//     scheduled (Karmada's policy.karmada.io/applied-placement); written with
//     a result or a FitError.
//   - annotation scheduler.tether.io/rejections: JSON list of
//     {"cluster", "reasons"} — every cluster the filters turned down with
//     all its reasons in filter order, for the placement "why not" query
//     (read it with placement.Rejections). Refreshed with every written
//     decision, absent when none was rejected.
//   - status.schedulerObservingAffinityName, status.lastScheduledTime,
//     status.schedulerObservedGeneration.
//   - condition Scheduled: True/Success, or False with NoClusterFit (the
//     FitError message, naming the clusters per reason), Unschedulable
//     (capacity) or SchedulerError (selection, strategy).
//   - spec.gracefulEvictionTasks (below).
//
// Rejections and the applied placement are annotations, not status fields,
// because api/work/v1alpha1 has no field for them and because the detector
// rewrites bindings through that type (unknown status fields would be
// dropped; annotations are kept).
//
// # Cluster state
//
// Labels, admin taints, provider/region/zones and resource models come from
// the stored Cluster (/tether/clusters/<name>); capacity (resource summary)
// and API enablements from the lease's last heartbeat, falling back to the
// stored status; topology from the heartbeat where the stored spec has none.
// Only stored (registered) clusters are candidates: a lease without a stored
// Cluster is ignored, so a cluster never gets work before the admin's labels
// and taints on it are known. A Cluster with a deletionTimestamp is never a
// candidate.
//
// Liveness becomes taints, replacing any stored taint of the same keys, as
// Karmada's cluster controller would: lease NotReady →
// cluster.karmada.io/not-ready:NoSchedule; lease Unknown →
// cluster.karmada.io/unreachable:NoSchedule (no new placement goes there)
// plus unreachable:NoExecute, which only failing-over bindings heed (below).
// timeAdded is when the hub saw the lease run out (hub/liveness). Leases are
// in memory: after a hub start, a cluster without a lease keeps its stored
// taints for Config.StartupGrace (the lease duration plus
// protocol.MaxReconnectDelay, the longest an agent waits to reconnect) and
// then counts as unreachable since the end of the grace.
//
// Cordon: the admin sets a NoSchedule taint on the Cluster object (e.g.
// {key: node.tether.io/cordoned, effect: NoSchedule}); new placements avoid
// it, bindings already there stay (scheduled clusters bypass the taint
// filter). Drain: a NoExecute taint instead, which fails them over.
//
// # Unreachable clusters
//
// Karmada v1.18 fails nothing over by default (its taint manager and
// NoExecute eviction are off). Tether keeps that default and makes it an
// explicit opt-in per policy:
//
//   - A binding fails over from an unreachable cluster only when it is
//     Divided with replicas and its policy sets spec.failover.cluster (in
//     Karmada that field only picks the purge mode; here it also asks for
//     failover), or the hub runs with --failover-unreachable
//     (Config.FailoverUnreachable, default off) — FailsOver. Duplicated and
//     non-workload bindings never leave a cluster for unreachability:
//     nothing would replace what they remove.
//   - Then only after a toleration: a placement without a toleration of
//     the unreachable (and not-ready) NoExecute taint gets Karmada's former
//     webhook default, {key, Exists, NoExecute, tolerationSeconds: 300}
//     (Config.UnreachableToleration, hub flag
//     --default-unreachable-toleration, default 5m) — Tolerations. Its own
//     toleration, if any, wins.
//   - Full disruption: when at least DisruptionThreshold (55 %) of the
//     registered clusters and at least DisruptionMinClusters (2) are
//     unreachable at once, the cause is likelier on the hub's side (its
//     network, load balancer or certificate, a pause, a slow restart), and
//     the loop adds no unreachable:NoExecute taint at all: nothing fails
//     over. It logs entering and leaving the mode, and Disrupted feeds the
//     hub's tether_hub_full_disruption gauge. When it ends, a cluster still
//     away counts its toleration from then (Liveness.NoExecuteFloor), as the
//     Kubernetes node lifecycle controller does.
//   - A hub that was paused (SIGSTOP, VM pause) holds lease expiry for one
//     lease duration after it resumes (hub/liveness), so the agents'
//     heartbeats get in before anything turns Unknown.
//   - A cluster that is back (lease Ready, no evicting taint) while its
//     graceful eviction is pending calls it off — Returned: it is a target
//     again with the task's replicas, the task ends, and the copy it kept
//     stays (a Divided binding then over its replicas is scaled down in the
//     same step; should that drop the cluster, its task is restarted
//     instead, so its copy still goes only gracefully). It is schedulable
//     again as soon as its first heartbeat arrives, well within one lease
//     period.
//
// Admin NoExecute taints (a drain) evict every untolerating binding, as
// before: that is a decision, not a loss of contact.
//
// # Failover and graceful eviction (spec §6.2–6.4, simplified)
//
// For every target cluster with a NoExecute taint the binding heeds and
// the placement's clusterTolerations (plus the defaults above) do not
// tolerate — or tolerate with tolerationSeconds that have run out since the
// taint's timeAdded (the loop rechecks at that time) — the cluster is
// removed from spec.clusters and a graceful eviction task {fromCluster,
// replicas, purgeMode (failover.cluster.purgeMode, default Gracefully),
// producer TaintManager, reason TaintUntolerated, creationTimestamp} is
// added, and the binding is rescheduled in the same write
// (placement.Schedule excludes evicting clusters). A task is removed when suppressDeletion is
// false, when its grace period (gracePeriodSeconds or
// Config.GracefulEvictionTimeout, default 10 min) has passed, or when the
// binding is scheduled and every target cluster's aggregated status item
// is Healthy (written by hub/aggregate); suppressDeletion true keeps it.
// Unlike Karmada, the grace period does not run out while the task's
// cluster is not Ready (its lease Unknown or NotReady, or none): removing
// the task then would delete the cluster's copy before anything replaced
// it; only a healthy replacement, or the cluster turning Ready (Returned),
// ends it. The timeout thus ends only tasks of Ready clusters (a drain).
// When a task ends, its cluster's "in the process of eviction" reason
// leaves the recorded rejections (a Divided binding is not rescheduled
// then, and the reason would stay for good). The step that changes a
// target's assignment does not count its item (it is about the previous
// assignment; hub/aggregate then holds it Unknown until the new version
// reports), so a Divided failover keeps the evicted copy until the
// replacement replicas are healthy.
//
// # Rebalancing
//
// A binding whose spec.rescheduleTriggeredAt is set (hub/rebalancer, for
// a WorkloadRebalancer) is scheduled afresh. When that takes replicas off
// a cluster of a Divided binding, the step keeps every cluster at the
// larger of its old and new replicas and records the move on the binding
// (place.AnnotationRebalance); once every target's aggregated status
// item is Healthy the new assignment alone stays, so the ready replicas
// never drop below what was there. New copies not Healthy within the
// graceful eviction timeout call the move off: the old assignment comes
// back. A change of spec.replicas or an eviction during the move ends it.
//
// # Application failover (spec §6.5)
//
// For a binding whose policy sets spec.failover.application (the detector
// copies spec.failover onto the binding), the loop is Karmada's application
// failover controller — ApplicationEvictions. It records on the binding
// (AnnotationUnhealthySince), per target cluster, when the cluster's
// aggregated status item (written by hub/aggregate) was first Unhealthy: Healthy forgets it; Unknown, no item,
// or a cluster whose lease is not Ready neither counts nor forgets (a
// stale or disconnected cluster is cluster failover's business: losing
// contact never fails an application over). When a cluster has been
// Unhealthy for longer than decisionConditions.tolerationSeconds (default
// 300), and its item is Unhealthy at that moment, the cluster is removed
// from spec.clusters and gets a graceful eviction task {reason
// ApplicationFailure, producer
// resource-binding-application-failover-controller, purgeMode}; the
// binding is rescheduled in the same write, away from it. By purgeMode:
// Gracefully (the default; or Graciously) keeps the old copy until the
// replacement is healthy or gracePeriodSeconds (default 600) has passed;
// Never sets suppressDeletion true, so the copy stays until the user
// removes the task; Directly (or Immediately) sets suppressDeletion false,
// so the copy goes at once. As in Karmada, Duplicated bindings fail over
// too. Unlike Karmada, which keeps the start in memory, a new leader
// continues the toleration from the recorded start instead of starting it
// over. Returned never calls these tasks off: only the taint manager's.
//
// # Time across leaders
//
// The starts an eviction counts from are stored with the binding or the
// cluster, not held only in the leader's memory: a graceful eviction
// task's creationTimestamp, an admin taint's timeAdded, the application
// failover's AnnotationUnhealthySince, and the end of the last full
// disruption, which unreachable clusters' tolerations count from
// (store.NoExecuteFloorKey). A new leader continues each from the recorded
// start, so an eviction's grace ends at its original deadline, not
// one grace after the leader change. The unreachable taints' timeAdded is
// each replica's own view of the lease records every replica follows
// (hub/liveness), so a standby that becomes leader has about the same; one
// that just started counts from its start (later, never earlier). The recorded times are the recording
// leader's clock: replicas' clocks must agree (NTP keeps them well under a
// second apart); a new leader whose clock is S ahead ends a grace S early.
//
// # The works limit
//
// With Config.MaxWorks (hub flag --max-works-per-cluster, default 10000,
// the limit hub/agentapi serves per stream), a cluster holding that many
// works (a work per binding targeting it, requiring it as a dependency, or
// evicting from it) is WorksFull for the scheduler: no new workload goes
// there, and the binding's rejections and Scheduled condition say "had
// reached the hub's limit of works per cluster". When a full cluster gets
// room, every binding is looked at again.
//
// Left out of Karmada's behaviour: ClusterTaintPolicy (NoExecute taints come
// from the admin or from lease expiry), the Failover feature gate (the
// opt-in above stands for it) and the purge-mode flag (Gracefully unless
// failover.cluster.purgeMode says otherwise), Karmada's check that
// the kind has an InterpretHealth hook before application failover (the
// health the agents report is used as it is),
// preservedLabelState / clustersBeforeFailover (statePreservation is
// refused at apply), and
// schedulerObservedGeneration in the health rule (bindings carry no
// generation; "scheduled" means the loop has nothing pending for the
// binding and its Scheduled condition is True). Unlike Karmada, a binding
// left with no target cluster keeps its eviction tasks until they time out.
// Tolerations are read from the current placement, not the applied one
// (a placement change is rescheduled in the same pass anyway).
//
// It imports hub/pipeline/place (the place stage), hub/store, hub/view,
// hub/liveness (its clock and lease changes), hub/pipeline/lease (the
// lease record), hub/placement, internal/protocol, api/, go-hclog and
// Kubernetes API machinery.
package scheduler
