// Package placement holds the hub's pure scheduling decisions: where a
// workload runs (Schedule, Karmada's scheduling algorithm), whether a
// binding is scheduled now (NeedsSchedule, Managed) and what a decision
// records on the binding (the applied-placement and rejections
// annotations, read with AppliedPlacement and Rejections; the Scheduled
// condition). The hub's scheduling loop (hub/scheduler), its client API
// (hub/clientapi) and tetherctl share them, so that a what-if and a
// "why not" answer the way the loop decides.
//
// It is pure: no I/O, no clock, no randomness, and it never modifies its
// input. It imports only api/, internal/overrides, hub/aggregate/fold (pure;
// for the names of the aggregator's annotations), Kubernetes API types and
// github.com/go-logr/logr (the logger Kubernetes' toleration check takes),
// never hub/store: tetherctl uses it without linking the hub's etcd server.
//
// # When to schedule
//
// NeedsSchedule returns the first Reason that holds (scheduler spec §3):
// never scheduled (ReasonNew), placement changed, replicas changed, an
// explicit reschedule, Duplicated or non-workload bindings on every
// cluster change (ReasonAlways), a target cluster gone; ReasonNone leaves
// the binding as it is. It reads only the binding and whether its clusters
// exist, so a restarted loop reschedules nothing. Managed says whether the
// loop schedules a binding at all.
//
// What a change concerns: CapacityBound says whether a change of nothing
// but the clusters' capacity can change the decision for a binding (it is
// waiting to be scheduled, or it follows every cluster change and its
// placement reads capacity: ReadsCapacity); AggregateOnly says whether a
// binding write changed only what hub/aggregate writes (aggregated status,
// template status), which neither the scheduling loop nor the detector
// decides on.
//
// # Where to run: Schedule
//
// Given a placement policy, the cluster snapshot, the workload and the
// binding's previous result, Schedule returns the target clusters with
// their replicas, exactly as Karmada v1.18.2's scheduler would (see the
// scheduler reference spec §4, and README.md for the few deliberate
// differences). A decision runs in four steps:
//
//  1. filter — cluster affinity (or the observed clusterAffinities term
//     and its overflow affinities), taints (NoSchedule/NoExecute against
//     clusterTolerations), API enablement, the hub's works limit per
//     cluster (Cluster.WorksFull), the topology properties spread
//     constraints need, and graceful eviction. Deleting clusters are
//     skipped; clusters already in the previous result bypass the taint,
//     API and works limit filters.
//  2. score and order — previously used clusters score 100, others 0;
//     candidates sort by overflow tier, score, available replicas (free
//     capacity estimated from the resource summary plus replicas already
//     there), name.
//  3. select — spread constraints by cluster or region.
//  4. assign — Duplicated, static weights, dynamic weights or Aggregated,
//     dividing with the Webster method, whose ties depend on the
//     workload's UID.
//
// Usage:
//
//	res, err := placement.Schedule(placement.Input{Placement: p, Clusters: cs, Workload: w, Previous: prev})
//	var fit *placement.FitError
//	switch {
//	case errors.As(err, &fit): // no feasible cluster: clear the binding's clusters
//	case err != nil:           // capacity or selection problem: keep the previous clusters
//	default:                   // write res.Clusters and res.ObservedAffinityName
//	}
//
// The placement must already carry its API defaults (Placement.SetDefaults).
// A Divided workload is deliberately not rebalanced when clusters change.
// DecodeCaseInput reads a conformance case's input (the format of
// `tetherctl placement simulate`) into an Input.
//
// # What a decision records
//
// Besides spec.clusters and the status fields of the API type, the loop
// writes AnnotationAppliedPlacement (the placement last scheduled with,
// Karmada's applied-placement) and AnnotationRejections (every Rejection
// of the last written decision), and sets ConditionScheduled with one of
// Karmada's reasons (ReasonSuccess, ReasonNoClusterFit,
// ReasonUnschedulable, ReasonSchedulerError).
package placement
