// Package scheduler decides where a workload runs: given a placement
// policy, the cluster snapshot, the workload and the binding's previous
// result, Schedule returns the target clusters with their replicas,
// exactly as Karmada v1.18.2's scheduler would (see
// the scheduler reference spec §4, and README.md for the few deliberate
// differences). It is pure: no I/O, no clock, no randomness, and it never
// modifies its input, so the hub's scheduling loop around it stays thin.
//
// A decision runs in four steps:
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
//	res, err := scheduler.Schedule(scheduler.Input{Placement: p, Clusters: cs, Workload: w, Previous: prev})
//	var fit *scheduler.FitError
//	switch {
//	case errors.As(err, &fit): // no feasible cluster: clear the binding's clusters
//	case err != nil:           // capacity or selection problem: keep the previous clusters
//	default:                   // write res.Clusters and res.ObservedAffinityName
//	}
//
// The placement must already carry its API defaults (Placement.SetDefaults).
// When to call Schedule (placement or replica changes, explicit reschedule,
// Duplicated on cluster changes) is the caller's decision; a Divided
// workload is deliberately not rebalanced when clusters change.
//
// It imports only api/ and Kubernetes API types.
package scheduler
