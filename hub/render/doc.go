// Package render turns bindings into works: for each target cluster of a
// binding, the template with its replicas revised by the interpreter,
// override policies applied in Karmada's order, hub-only fields pruned and
// ownership labels set (Render, pure and table-tested). Works are a derived
// view (DESIGN §3): nothing here is stored; the Renderer keeps them in
// memory, content-addressed.
//
// The client API's Simulate computes what a cluster would receive with the
// same pure functions the Renderer uses: Render, Candidates (the override
// policies that apply to a template, in order), PermanentID (a binding's
// ID in the ownership labels), Targets and Suspended; hub/simulate_test.go
// checks that both give the same bytes.
//
// # Usage
//
//	r := render.New(v, interp, render.Config{}, logger) // v: the replica's *view.View
//	srv, err := agentapi.New(cfg, r, statuses, leases, logger) // r is agentapi.Works
//	err = r.Run(ctx) // one of the hub's workers: follows the view until ctx
//	                 // ends; Current, Changes and Gone wait for its first
//	                 // publication
//
// # What it reads
//
// The replica's view of the store (hub/view), one subscription, so that
// changes come in one revision order and each batch is consistent as of
// its revision; a full batch (the view's first list, or a list after its
// watch failed) is loaded as a fresh list. It decodes nothing itself:
// templates (any object under /tether/objects/ outside Tether's own
// groups), their bindings (/tether/bindings/, same suffix),
// ClusterOverridePolicies and OverridePolicies
// (/tether/objects/policy.tether.io/...) and Clusters (/tether/clusters/<name>, JSON of api/cluster/v1alpha1.Cluster).
// A work exists for (template, cluster) when the template, its binding and
// the Cluster object exist and the binding targets the cluster
// (spec.clusters, plus spec.requiredBy for dependencies: an attached
// binding renders as a work of its own template).
//
// # FederatedResourceQuota staticAssignments
//
// As Karmada's federated-resource-quota-sync controller, every cluster a
// FederatedResourceQuota's staticAssignments names gets a ResourceQuota
// named like the quota, in its namespace, with spec.hard the assignment's
// hard (work.RenderQuota). It is a work like the others, under the
// quota's key (policy.tether.io/FederatedResourceQuota/<namespace>/<name>):
// the quota is its template and work.QuotaBinding, the clusters named,
// its binding (quota.go), so every rule below governs it. A cluster
// removed from the list, or the quota deleted, removes the ResourceQuota
// (DELETE): an explicit instruction of the hub. A quota that does not
// decode, a failed render, a restart or a hub that is not authoritative
// keeps it; a cluster named before it registers gets it when it does.
//
// # Apply options
//
// ApplyOptions (part of every work Render computes): the strategy of the
// template's apply.tether.io/strategy annotation (ApplyStrategyOf:
// ServerSideApply when absent, Update, CreateOnly or ReadOnly, OCM
// ManifestWork's updateStrategy types; Karmada has no per-resource
// strategy), the binding's conflict resolution (Abort unless Overwrite)
// and deletion policy. An unknown strategy fails the render, so the
// cluster keeps the version it has; the client API refuses such a template
// at apply.
//
// # Keys, versions, sharing
//
// A work's key is its template's store key without the prefix,
// <group>/<Kind>/<namespace|_>/<name> ("core" for the legacy group); the
// cluster is implicit in the agent's stream. Its version is the hex SHA-256
// of the canonical JSON of its manifests, apply options and binding
// reference, so identical content has one version everywhere. The Renderer
// holds one copy per version, shared by every cluster holding it: a
// template duplicated to 100 clusters without overrides is one rendered
// work. Rendering itself is shared too: clusters that get the same
// replicas, are selected by the same override rules and give their
// valueFrom sources the same values (overrides.Signature) are rendered
// once.
//
// # What a change re-renders
//
// A template or binding spec change: that template's works. An override
// policy change: the templates its old or new selectors select. A cluster
// created: the works targeting it; a cluster whose labels, annotations,
// provider, region or zones changed (overrides.SameForOverrides): the
// works targeting it that some override policy selects; an interpreter customization or webhook configuration
// created, changed or deleted (Config.Customizations, after the hub's
// interpreter has it): the templates of the kinds its target or rules
// name, and no other (with Config.Customizations, nothing is rendered
// before the stored customizations are loaded); status-only writes of
// bindings and clusters: nothing. A render that gives the version a cluster already has changes
// nothing for it. A failed render leaves the cluster its current version
// and is retried with backoff.
//
// # Renders that call a webhook
//
// A template whose replicas an interpreter webhook revises (the
// interpreter says so: Remote) is rendered off the loop, at most
// maxRemoteRenders (4) templates at a time, so that a slow or hung webhook
// holds only its own templates, for its timeout, while every other
// template goes on rendering. Until its render ends, the template is
// published without it: its clusters keep the version they have and Gone
// says Keep for them. A change to it meanwhile is rendered once that
// render is published, so an older render never replaces a newer one.
// The webhook's circuit breaker (internal/interpreter/webhook) fails calls
// at once after BreakerFailures failures in a row.
//
// # Rollouts
//
// A template that a RolloutPolicy of its namespace selects
// (hub/pipeline/rollout.Select) is paced: its revision
// (rollout.Revision, of the template and the override policies that
// apply to it) is rendered, with rollout.RevisionAnnotation set to it, only
// for the clusters whose target in the stored rollout record
// (/tether/rollouts/<work key>, written by hub/rollout) is that revision;
// every other target keeps the version it has, never rewritten nor
// removed by the hold. While the record is missing or does not decode, or
// a RolloutPolicy of the namespace does not decode, every target holds. A
// target without a work that holds gets none until the rollout admits it:
// the renderer does not keep older templates, so a cluster added during a
// rollout receives the template when its turn comes. Rollout and
// RolloutChanged tell the rollout loop each paced key's revision and the
// versions rendered at it, so that only an agent's ack or report of one of
// those versions counts for the revision.
//
// # Changes and removals
//
// Each publication is one revision (in-memory, not etcd's). Per cluster,
// Changes returns the keys changed after a revision, coalesced to their
// latest state. A removed work is remembered (Config.RemovedRetention,
// Config.MaxRemoved) with its deletion policy, DELETE unless the binding
// has preserveResourcesOnDeletion (ORPHAN), and its reason (template
// deleted, binding deleted, placement changed, or failover when a graceful
// eviction from the cluster ended); Gone answers from that memory and from
// bindings that exist and no longer target the cluster, and says Keep for
// works a binding still places on the cluster without a published version.
// A cluster in a graceful eviction task, or whose dispatching is
// suspended, keeps the version it has. The memory is an optimization: an
// agent that returns after it is gone still deletes what the hub removed,
// from the key set of the hub's authoritative SyncDone (hub/syncstate).
//
// # What never removes a work
//
// A stored template, binding, override policy or cluster that does not
// decode keeps its last good value; a work whose template or binding does
// not decode and has no last good value (after a restart) keeps whatever
// its clusters have and is vouched gone nowhere. A panic while rendering
// one key is recovered (hub/guard): logged, counted, the key keeps what it
// has and is retried with backoff, the others go on.
//
// Unknown means keep: a key that did not render (its render panicked or
// failed, or its inputs do not decode) may be held by every cluster that
// holds it, that it last vouched for and that its binding targets now
// (any cluster without a binding). Until it renders, Gone says Keep for
// it on those clusters, so an authoritative SyncDone lists it, and
// Authoritative is false for them. Only a failed render's plan is known
// enough to remove the work from clusters its decoded binding left; a
// panic removes nothing. A key is left out of Gone, so that an agent
// deletes it, only when the renderer positively knows it gone: its
// template and binding are absent and nothing undecodable may hide them.
// While Config.Authority says the hub is not authoritative (its store
// lost or regressed data, hub/authority), no work is removed from any
// cluster and Gone vouches for nothing.
//
// A hub built with -tags renderfault makes every render of the work key
// named by the environment variable PanicKeyEnv panic (fault.go), so
// that the fault suite can make one key's render panic in a real hub.
//
// It imports hub/pipeline/work (the render stage), hub/pipeline/rollout
// (which RolloutPolicy paces a template, its revision), hub/view, hub/store, api/,
// internal/overrides, internal/backoff, hub/syncstate, hub/guard and
// hub/customizations' Subscription; the interpreter is consumed through
// work.Interpreter.
package render
