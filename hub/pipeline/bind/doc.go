// Package bind is the pipeline's first stage, pure: which policy claims a
// resource template and what the template's binding holds (Karmada v1.18's
// rules, scheduler-spec §2). The detector (hub/detector) runs it on its
// index for every template it reconciles; Simulate (hub/clientapi) runs it
// on the stored objects with the request's laid over them; both call
// Wanted with the same Input, so a simulation binds as the detector does.
//
// # Usage
//
//	in := bind.Input{Template: t, Current: bind.CurrentOf(stored), PPs: pps, CPPs: cpps,
//		OverrideExists: exists, Preemption: true}
//	dec, want, err := bind.Wanted(ctx, in, interp) // Decide, then BuildSpec
//	b := bind.Merge(stored, t, want)                // the binding to store
//
// # Choosing the policy (Decide, Choose)
//
// A template bound to a policy keeps it (the claim, read from the stored
// binding by ClaimOf) while the policy exists; otherwise the matching
// PropagationPolicy of its namespace (one of another namespace never
// counts, even given in Input.PPs) with the highest explicit priority,
// then implicit priority (name > label selector > all), then the
// lexicographically smaller name wins; only when no PropagationPolicy
// matches do ClusterPropagationPolicies compete, with the same order
// (Choose, what an unclaimed template goes to). A newer higher-priority
// policy takes a bound template only through preemption
// (`preemption: Always`, when Input.Preemption). A policy change that makes
// the claiming policy stop matching releases the template (verdict
// Release: the binding keeps its placement without a claim); a template
// change does not (verdict Keep). dependentOverrides and Lazy activation
// may hold a change back.
//
// # Namespaces
//
// Filter says which templates the detector ignores (reserved and skipped
// namespaces, claimed-by labels) and which Namespaces are auto-propagated
// (Filter.AutoPropagated): Decide gives verdict AutoPropagate to such a
// Namespace that no ClusterPropagationPolicy claims, and its binding
// (NamespacePolicy, LabelAutoPropagated) goes to every cluster. Pinned is
// the placement of one opted out after it was propagated: the clusters it
// is on.
//
// # The binding (BuildSpec, Merge)
//
// BuildSpec fills the detector's part of a binding from the template and
// the policy (replicas and requirements through the Interpreter); Merge
// lays a Want over the stored binding, keeping every field the scheduler
// and the aggregator own; the claim is recorded as labels and annotations
// (LabelPPPermanentID, AnnotationPPName ...), never on the template.
//
// It imports hub/store (ObjectRef only), api/, internal/overrides and
// Kubernetes API machinery; it does no I/O.
package bind
