// Package rebalancer is the hub's WorkloadRebalancer controller, the task
// hub.Run names "rebalancer": Karmada's workload-rebalancer controller
// over Tether's store. For each rebalancer (api/apps/v1alpha1) it sets
// spec.rescheduleTriggeredAt of every named workload's binding to the
// rebalancer's creationTimestamp (or, for a binding scheduled in that
// second or later, the second after: TriggerAt), which makes the
// scheduling loop
// (hub/scheduler, placement.NeedsSchedule) schedule it afresh; records
// status.observedWorkloads (Successful, or Failed with reason
// ReferencedBindingNotFound when the workload has no binding),
// observedGeneration and finishTime; and deletes the rebalancer
// spec.ttlSecondsAfterFinished after finishTime.
//
// # Usage
//
//	loop := rebalancer.New(fenced, v, logger) // v: the replica's *view.View
//	err := loop.Run(ctx)                      // returns nil when ctx ends
//
// It reads rebalancers and bindings from the replica's view (hub/view),
// opening no watch of its own and decoding no binding: Decide, NeedsTrigger
// and Status are the pure decisions, table tested; the loop around them
// reads the view and writes. Every write compares the revision the
// decision was made on (a conflict is looked at again after retryAfter or
// the next change), and changes only the field it owns (patchJSON): the
// trigger, the status, or the delete. The hub runs it only while its
// replica leads, through the store fenced by that leadership, so a deposed
// leader's writes fail. A new leader repeats nothing: a binding triggered
// at or after the rebalancer's creation is not written again, an unchanged
// status is not written, and the TTL counts from the stored finishTime.
//
// What a fresh schedule does with the replicas is the scheduler's
// (hub/pipeline/place: a rebalance of a Divided binding keeps the copies
// it shrinks until the new assignment is healthy).
//
// It imports api/, hub/store, hub/view, go-hclog and Kubernetes API
// machinery.
package rebalancer
