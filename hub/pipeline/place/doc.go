// Package place is the pipeline's place stage, pure: the whole scheduling
// decision for one binding (Step) on the members' view of the clusters
// (BuildMembers: each stored Cluster joined with its lease, the taints the
// lease implies, its capacity and APIs): evictions called off for clusters
// that are back (Returned), the taint manager (TaintEvictions), the
// application failover (ApplicationEvictions), the placement decision and
// hub/placement's algorithm (BuildInput), then the graceful eviction tasks
// (AssessTasks). A triggered reschedule (a WorkloadRebalancer) of a Divided
// binding that takes replicas off a cluster is a move (Rebalance,
// AnnotationRebalance): every cluster keeps the larger of its old and new
// replicas until all targets are Healthy, then the new assignment alone
// stays; after the eviction timeout without that, the old one comes
// back. The scheduling loop (hub/scheduler) calls StepIndexed for every
// binding it reconciles; Simulate and GetPlacement (hub/clientapi) call
// Step, BuildMembers and BuildInput on the same inputs.
//
// # Usage
//
//	members := place.BuildMembers(stored, leases, now, place.Liveness{GraceUntil: grace})
//	out := place.Step(binding, members, now, place.Options{})
//	// out.Binding: what to store; out.Evicted, out.Recheck: what happened, when to look again
//
// It imports hub/placement, hub/pipeline/lease (its Lease and State values),
// api/ and Kubernetes API machinery; it does no I/O.
package place
