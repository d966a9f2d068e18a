// Package pipeline is the hub's pipeline for one resource template, pure:
// bind (hub/pipeline/bind: which policy claims the template, and its
// binding), place (hub/pipeline/place: the scheduling step on the members'
// view), render (hub/pipeline/work: each target cluster's work) and derive
// status (hub/aggregate/fold). Each stage is a function of its inputs: no
// store, no goroutine, no clock but the Now it is given.
//
// The loops run one stage each over their own view of the store: the
// detector calls bind.Wanted, the scheduling loop place.StepIndexed, the
// renderer work.Render, the aggregator fold. Template chains the stages
// for one template with the same functions and is what Simulate
// (hub/clientapi) calls, so that what Simulate shows is what the loops
// would write and the agents receive.
//
// # Usage
//
//	res := pipeline.Template(ctx, pipeline.Input{Bind: in, Stored: stored, Members: members,
//		Clusters: clusters, Now: now, Place: opts}, interp)
//	// res.Binding: the binding as the scheduling loop would store it;
//	// res.Works: each target cluster's work, as the renderer renders it.
//
// It imports hub/pipeline/bind, hub/pipeline/place, hub/pipeline/work,
// api/ and Kubernetes API machinery.
package pipeline
