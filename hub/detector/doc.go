// Package detector matches resource templates to PropagationPolicies and
// ClusterPropagationPolicies and writes one binding per template, with
// Karmada v1.18's rules (scheduler-spec §2): the template's identity, its
// replicas and per-replica requirements from the interpreter, and the
// claiming policy's placement. The scheduler then fills the binding's
// clusters; the detector never writes them.
//
// # Usage
//
//	d := detector.New(st, v, interp, logger, detector.WithPreemption(true)) // v: the replica's *view.View
//	err := d.Run(ctx) // follows /tether/objects/ and /tether/bindings/ in the view
//
// It reads templates, policies and bindings from the replica's view of the
// store (hub/view), decoded once there and shared (read only: bind.Merge
// copies what it changes, the interpreter gets copies); it writes
// bindings through st.
//
// Run keeps an in-memory index of templates, policies, override policies and
// bindings, and reconciles a template whenever something it depends on
// changes. Reconciling is level-triggered: the same inputs always give the
// same binding, and a binding already equal to it is not written, so a
// restart writes nothing. A binding write that changes only what
// hub/aggregate records (placement.AggregateOnly: aggregated status,
// template status) reconciles nothing: the detector decides nothing on it,
// and its index keeps bindings without their aggregated status items (most
// of a binding placed on many clusters); an update of a binding reads the
// stored items and writes them back unchanged. Binding writes go on in the background, up to maxInFlight at once
// (writes.go), while Run applies events and reconciles other templates; a
// template is not reconciled again before its write returned, and a write
// refused because the binding changed meanwhile is read again and
// reconciled again (conflictRetries times, then after a backoff).
//
// # Choosing the policy
//
// Which policy claims a template, and the binding's spec, is the bind
// stage, hub/pipeline/bind (bind.Wanted): the detector gives it the
// template, the stored binding's claim and the policies of its index, adds
// the dependency graph's requiredBy, and writes what bind.Merge returns. A
// newer higher-priority policy takes a bound template only through
// preemption (`preemption: Always`, on by default in Tether, see
// WithPreemption).
//
// # Namespaces (namespaces.go)
//
// As Karmada's namespace controller, every Namespace template goes to
// every cluster with no policy: bind.Decide gives verdict AutoPropagate to a
// Namespace that no ClusterPropagationPolicy claims (one that matches it
// wins, and deleting it gives the Namespace back), and its binding,
// labelled namespace.tether.io/auto-propagated, places it on every
// cluster whatever the taints, Duplicated, conflictResolution Abort (a
// namespace a member already has is not taken over). Not propagated:
// "default", the reserved namespaces, those matching the skipped patterns
// (WithSkippedNamespaces, default kube-.*), Namespaces labelled
// namespace.karmada.io/skip-auto-propagation: "true" (or
// namespace.tether.io/…), and every Namespace with
// WithNamespacePropagation(false). A Namespace opted out after it was
// propagated keeps its binding, pinned to the clusters it is on: nothing
// is removed from a member, and no new cluster gets it (Karmada's
// documented behaviour).
//
// Unlike a Kubernetes API server, the hub accepts a template in a
// namespace it has no Namespace for; the detector then creates that
// Namespace on the hub (label namespace.tether.io/auto-created), so that
// the template finds it in every member with no extra policy. It never
// deletes or changes one; deleted while templates remain in it, it is
// created again. Deleting a Namespace template makes the agents delete
// the member namespace only when it holds nothing Tether does not own for
// that work (agent/apply); un-placing one orphans it.
//
// # Where Tether differs from Karmada (also in README.md)
//
//   - The claim is recorded on the binding (labels and annotations with
//     Tether's keys), never on the user's template. The policy's permanent
//     ID is the etcd create revision of its key, so a policy deleted and
//     created again under the same name is a different policy.
//   - Deleting a policy, or changing its selectors so that a bound template
//     no longer matches, releases the template: it goes to the next
//     matching policy, or, as in Karmada, its binding stays with its
//     placement and clusters and only loses the claim (verdict Release), so
//     its works and member objects stay; a matching policy takes it over
//     later. Only deleting the template deletes its binding. A template
//     whose own labels change so that its claiming policy no longer matches
//     keeps its binding untouched, as in Karmada.
//   - A stored template, policy, override policy or binding that does not
//     decode is never taken as absent: the last good value stays in the
//     index (none after a restart: the bindings it concerns are then kept
//     as they are), the error is logged and counted (WithCounts), and every
//     binding it concerns carries condition InputsDecoded=False naming it.
//   - A panic while applying one event or reconciling one template is
//     recovered (hub/guard): logged with the key, counted, and the template
//     retried later like any failure; the others go on.
//   - Policies with a deletionTimestamp count as deleted.
//   - activationPreference Lazy is evaluated on revisions: a binding of a
//     Lazy policy is refreshed only when the template's revision differs from
//     the one recorded in the binding, and a waiting template is bound to a
//     Lazy policy only when it was written after the policy's last change.
//   - Dependencies (propagateDeps) get "attached" bindings with requiredBy,
//     no placement and no claim; the detector copies each parent binding's
//     clusters into the requiredBy snapshot.
//
// # Customizations
//
// With WithCustomizations, a created, changed or deleted interpreter
// customization or webhook configuration reconciles again the templates of
// the kinds it concerns (its target, or its rules), once the hub's
// interpreter has it: their replicas, requirements and dependencies follow
// it without waiting for a template change. Other kinds are not touched.
// Run reconciles nothing before the stored customizations are loaded, so
// that no binding is written with replicas interpreted without them.
//
// # Webhooks
//
// With an interpreter that answers webhook calls in the background
// (interpreter.Deferred, as the hub runs it), a template whose replicas or
// dependencies a webhook interprets waits for that answer without holding
// the loop: its reconcile fails with interpreter.ErrPending, and it is
// reconciled again when an answer arrives. Other templates go on being
// bound while a webhook hangs.
//
// It imports hub/pipeline/bind (the bind stage), hub/store, hub/view, api/,
// hub/customizations' Subscription, hub/placement, hub/aggregate/fold, hub/guard, internal/overrides,
// internal/backoff, internal/interpreter's ErrPending and Kubernetes API
// machinery; the interpreter is consumed through bind.Interpreter.
package detector
