// Package apply writes a work's objects into the member cluster and keeps
// them there (DESIGN §4, Apply and Drift). It owns everything the agent does
// to objects in its own cluster: ordering (Namespaces and CRDs first, CRs
// only once their CRD is Established), GVK→GVR mapping from the discovery
// of each applied group version alone (mapper.go, asked again when a kind
// is unknown and after a CRD is established), the four strategies,
// conflict resolution, retain through the interpreter, ownership labels,
// Events for failures, deletion and orphaning, and the drift watch.
//
// # Use
//
//	a, err := apply.New(apply.Config{RESTConfig: rc, Interpreter: interp, Registerer: reg}, logger)
//	go a.Run(ctx)               // drift informers and workers; returns when ctx ends
//	ack, err := a.Apply(ctx, w) // per work version (agent/hubclient.Applier)
//	err = a.Delete(ctx, w, state.Removal{Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE,
//		Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED, Hub: hubIdentity})
//
// agent/status reads what was applied through Snapshot, Keys and Changes.
//
// # Strategies
//
//   - SERVER_SIDE_APPLY (default): a server-side apply with field manager
//     "tether-agent" of Retain(desired, observed). Tether forces the apply
//     on objects it owns (they carry this work's ownership label: taking
//     back fields another writer changed is what drift correction means)
//     and on foreign objects only with OVERWRITE. When Retain ran, the
//     apply carries the observed resourceVersion, so a value read for
//     retention (an HPA's replicas) cannot be undone by a race; a conflict
//     is retried from a fresh read, as for UPDATE.
//
// An existing object is read from the drift informer's cache when it is
// there as this work's (a new version of a work costs the member API
// server its write alone, no GET); the write then carries the copy's
// resourceVersion, and a copy that was behind is read again from the API
// server after the conflict. An object the kind's synced informer holds
// none of by that name is taken to be new, and its write only creates:
// UPDATE and CREATE_ONLY create, and the apply carries a resourceVersion
// no object has (absentRV), so both fail on whatever object the member
// has by that name (a foreign one, or Tether's not seen yet), which is
// then read with a GET and decided as before. A new object thus costs one
// write. The first write of a kind starts the kind's informer and waits
// for its first list (once per kind, at most firstSyncWait), so a kind's
// first objects cost no GET either. Another work's object, and any object
// of a kind whose informer has not synced, is read with a GET.
//   - UPDATE: Karmada's objectwatcher update: resourceVersion, finalizers
//     and ownerReferences are copied from the observed object, labels and
//     annotations merged (keys only the member has are kept unless
//     Karmada's managed-labels/managed-annotations record says the
//     template dropped them), then Retain, then Update.
//   - CREATE_ONLY: create when absent, never write an existing object.
//   - READ_ONLY: never write; the objects are only observed for status.
//     Snapshot gives an object without Karmada's template generation
//     annotation (one Tether never wrote) generation "0" on its copy, so
//     the status reflection of workloads, which requires it, reports it.
//
// Retain runs through the interpreter before every write of an existing
// object (when a Retain hook exists for the kind, as in Karmada), so e.g. a
// Deployment labelled resourcetemplate.karmada.io/retain-replicas=true keeps
// the replicas an HPA set in the member cluster.
//
// # Ownership
//
// Every object Tether writes carries the label tether.io/work-key (the work
// key, or "sha256-<hex>" of it when the key is not a valid label value) and
// tether.io/binding-uid, and the annotations tether.io/work-key (the full
// key), tether.io/work-version and tether.io/binding ("namespace/name"). An
// existing object without our work-key label is foreign: with ABORT (the
// default) it is left alone and reported as CONFLICT; with OVERWRITE it is
// taken over.
//
// # Deletion
//
// Delete releases a removed work's objects in the reverse of apply order:
// deleted (background propagation, with the observed UID as a
// precondition, and its resourceVersion when the object was read from the
// drift informer's cache) or, with the ORPHAN policy, kept with Tether's labels and
// annotations removed. A Namespace or CRD is orphaned, never deleted,
// unless the removal's reason is TEMPLATE_DELETED, and a Namespace even
// then when it holds an object the work does not own (foreign.go: objects
// without an owner reference that are not being deleted, Kubernetes'
// defaults and events aside; a namespace whose content cannot be listed is
// kept too): deleting one deletes everything inside it. An object a new
// version of the work no longer has is released the same way (reason
// "pruned"). Every object deleted or orphaned is one Info line (hub
// identity, work key and version, object, reason, rule) and counts in
// tether_agent_member_deletes_total{reason},
// tether_agent_member_evictions_total (the work was orphaned for the
// grace period) or tether_agent_member_orphans_total{reason,rule}
// (metrics.go), registered with Config.Registerer.
//
// # Drift
//
// Run keeps one informer per applied GVR over the dynamic client, filtered
// by the tether.io/work-key label; its cache holds the objects without their
// managedFields (status reads them from it). A change that Tether did not
// write to what it applied (a new generation with another spec, a label or
// annotation Tether set changed or removed, or any change for kinds without
// a generation), or a deletion, puts the work on a rate-limited queue, and
// the work's held version is applied again (with retain). Labels and
// annotations other writers add (a Deployment's revision annotation, which
// also moves its generation) are theirs and not drift. An object the
// informer lists for the first time (its kind's informer starts after the
// kind's first apply) is drift when its generation is not the one
// Tether's write left. The
// per-work backoff grows while repairs keep coming within fightWindow, so a
// fight with another controller slows down instead of spinning.
//
// A Retain that fails because an interpreter webhook is unreachable from
// the member says so in the ack (agent/customizations.Explain).
//
// It imports agent/state, agent/customizations (Explain), agent/kube,
// api/config/v1alpha1, the generated agent protocol and
// internal/interpreter/native, never hub/.
package apply
