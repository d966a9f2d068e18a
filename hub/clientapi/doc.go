// Package clientapi is the hub's client API (DESIGN §3): ObjectService
// (Apply, Get, List, Delete, Watch), PlacementService (GetPlacement,
// WatchPlacement, WatchPlacements, Simulate) and ClusterService (ListClusters, GetCluster,
// Cordon, Uncordon, Taint, Label, Annotate) over the store, for tetherctl and any gRPC
// client; RolloutService (GetRollout, PauseRollout, ResumeRollout,
// UndoRollout: rollout.go) reads and steers the rollout records
// hub/rollout writes, UndoRollout re-applying the template's previous
// content through Apply; Get and List of a template paced by a rollout
// add its condition (rollout.Condition) to the template's
// .status.conditions (withRollout). Over hub/membership's Registry (Config.Registry; without one they
// answer UNIMPLEMENTED), and for admins only: TokenService issues, lists and
// deletes bootstrap tokens (tokens.go), UserService signs users' client
// certificates with the hub CA (users.go) and, over hub/roles
// (Config.Roles), stores their roles (SetUserRole, ListUserRoles in
// roles.go), ClusterService's Remove revokes
// a cluster's certificates, Approve binds its name to a new key and
// RejectKey discards a pending one (clusters_admin.go); both need the
// pending key's fingerprint, which ListClusters and GetCluster show. Over
// hub/revocation (Config.Revocations), UserService's RevokeUser revokes a
// user name's certificates and ListRevokedUsers lists the revocations.
//
// # Usage
//
// The hub's composition root builds the services once and registers them on
// its gRPC server, whose transport credentials verify client certificates
// of the hub CA (tls.VerifyClientCertIfGiven or RequireAndVerifyClientCert):
//
//	revoked := revocation.New(st, v, logger) // its Run follows /tether/revoked-users/ in the view v
//	book := roles.New(st, v, logger)         // its Run follows /tether/user-roles/ in the view v
//	grpcServer := grpc.NewServer(append(clientapi.RefuseRevoked(revoked), creds)...)
//	api, err := clientapi.New(clientapi.Config{Leases: leases, Revocations: revoked, Roles: book}, st, interp, logger) // interp: *interpreter.Interpreter, or nil; leases: *liveness.Leases
//	api.Register(grpcServer)
//
// # Authorization
//
// Every RPC reads the caller's verified client certificate (pki.IdentityOf)
// and the user's grant (Config.Roles' GrantOf: the stored role, or the one
// the certificate carries), and decides with roles.Decide, the hub's one
// authorization decision (auth.go): first what the method needs
// (methodRules, one rule per method of the generated services: a method
// without one is refused), then, for the methods that touch objects, each
// object by its kind and namespace (caller.may): Apply and Simulate every
// input object, Get, Delete and the placement calls their object, List and
// Watch of a namespace or a cluster-scoped kind that namespace or kind.
// List, Watch and WatchPlacements of every namespace leave out what the
// caller may not read. Agents are refused. No certificate is
// UNAUTHENTICATED, a role that may not is PERMISSION_DENIED naming the
// namespace or kind. Errors become gRPC codes in one function, grpcStatus.
//
// Open streams (Watch, WatchPlacement, WatchPlacements) follow the
// caller's stored role (follow.go): each object is decided with the role
// as it is when it is read and when it is sent, and a role that no longer
// allows what the stream asked for (its namespace, kind or template) ends
// it PERMISSION_DENIED.
//
// A revoked user's certificate (hub/revocation) is refused before any
// service sees the call: RefuseRevoked's interceptors, installed on the
// hub's server, answer UNAUTHENTICATED naming the revocation, and end the
// user's open streams (Watch, WatchPlacement, WatchPlacements) with it as soon as the
// replica learns of the revocation from etcd. An admin cannot revoke the
// name they are connected as.
//
// Viewers see Secrets without their data (secrets.go): in Get, List, Watch
// and Simulate output, every value of a core/v1 Secret's data and
// stringData is "" (keys kept) and the annotation secret.tether.io/redacted
// says so; Apply refuses a Secret carrying that annotation, so a viewer's
// read applied back cannot wipe the data. Any role may Simulate, but not
// with ResourceInterpreterCustomizations in the input: checking those runs
// their Lua on the hub, which only a role that may apply them (a
// fleet-wide admin) may do, refused in Apply and Simulate before the
// check runs (mayRunScripts); the stored customizations, accepted from an
// admin, run for everyone.
//
// # Apply
//
// Input is multi-document YAML, JSON values, a JSON array or a Kubernetes
// List (api/codec's limits: 3 MiB, depth, aliases, UTF-8). Each object is
// either one of Tether's kinds — decoded strictly by api/codec (Karmada's
// groups accepted), defaulted, validated, stored under Tether's group — or a
// resource template of any kind: apiVersion, kind and metadata.name are
// required, labels must be valid, an apply.tether.io/strategy annotation
// must name a strategy (work.ApplyStrategyOf; REJECTED at that
// annotation with the allowed values otherwise), and the namespace follows
// the kind's scope: built-in Kubernetes kinds are known; a custom resource takes the
// scope of its CustomResourceDefinition when one is in the input or the
// store, and is namespaced otherwise (a namespace of its own or the
// default). Unknown kinds are accepted; the interpreter treats them as
// non-replicated. Clusters and bindings are written by the hub and refused.
//
// Bounds (bounds.go): at most 1,000 labels per object and 10,000 items in
// any array; annotations as Kubernetes checks them (256 KiB in all); and
// spec.replicas of Deployments, StatefulSets, ReplicaSets and
// ReplicationControllers an integer from 0 to 2^31-1. A
// ResourceInterpreterCustomization is checked as the hub's interpreter
// will load it (interpreter.ValidateCustomization: syntax, top-level code,
// its function, a dry run within the Lua limits, conflicts with the stored
// ones), so a script that would loop or exhaust memory is REJECTED with the
// Lua error and the limits, never stored. List's page_size is 0 (500) to
// 5000, and a negative Watch start_revision is INVALID_ARGUMENT.
//
// What the hub owns is dropped from the input and ignored when comparing:
// status, and metadata uid, resourceVersion, creationTimestamp, generation,
// managedFields, selfLink and deletion fields. An object equal to the
// stored one otherwise is UNCHANGED; a changed one keeps its uid and
// creationTimestamp and gets generation+1 (a WorkloadRebalancer also keeps
// the status hub/rebalancer wrote: withHubStatus). resourceVersion is the etcd
// revision of the value: it is not stored inside it (it is only known once
// written) but set on every read. An object larger than
// Config.MaxObjectBytes (1.5 MiB) as stored is REJECTED with its size and
// the limit.
//
// Validation is all or nothing: every object is validated and compared
// with the store first; if any is rejected (or on dry run) nothing is
// written and the others report what would have happened. The writes are
// then made in dependency order (order.go's installOrder: Namespaces,
// CustomResourceDefinitions, interpreter customizations, override and
// propagation policies, then templates in Helm's install order, custom
// resources last), whatever the input's order: a tier is written once the
// one before it is, its objects up to 16 at once (one after the other, a
// request of a hundred templates on a busy hub took seconds: issue 16),
// each conditional on the revision read (create-if-absent,
// update-if-unchanged) and in a transaction of its own, so that each
// object gets a revision of its own (a Watch resumes after the last event
// it yielded; objects of one etcd transaction would share a revision) and
// a watcher sees a Namespace before what it holds. If a write fails (a
// concurrent writer won, the store failed), no write starts after it and
// none is undone: the response says it is partial, the
// objects written say so with their revision, the failed one is FAILED
// with why, the rest SKIPPED. When nothing was written yet the request
// fails instead, ABORTED for a concurrent writer: retry.
//
// Comparing with the store reads every object in one local read
// (store.GetLocalAll, no quorum round: on a busy hub a quorum read waits
// behind etcd's log fsyncs as long as a write does). What was read is
// checked before it counts: a request with a single write by that write's
// own condition; any other (several writes, an UNCHANGED object) by one
// quorum round comparing every object's revision (store.Unchanged). When
// the check fails (another writer, or an etcd member that lagged behind),
// the request is compared again from quorum reads (store.GetAll), as
// above.
//
// # Reads
//
// Get and List of a template merge its binding's status into .status with
// fold.MergeInto: the aggregator folds the per-cluster items with the
// interpreter's AggregateStatus as reports arrive and records the result on
// the binding, so a read only copies it. Get of a ResourceBinding or
// ClusterResourceBinding by the name GetPlacement gives returns the binding
// with its per-cluster status items (bindings are stored under their
// template's key, so this scans them; it serves describe, not bulk reads).
// Watch streams objects as stored
// (resourceVersion set, no merged status), from a revision: a compacted one
// is OUT_OF_RANGE. Label selectors filter each event on the object's new
// labels, so an object leaving a selection sends nothing. List pages
// re-read the store: later pages may see later changes.
//
// A slow watcher costs the hub a bounded buffer (lagQueue): at most
// Config.WatchBufferEvents events (512) and WatchBufferBytes (4 MiB) read
// from etcd and not yet sent; past that the hub stops reading etcd for
// that watch and reads on from etcd's history once the client has caught
// up half of it, so the client loses nothing, and its stream ends
// OUT_OF_RANGE (List again) only if that history was compacted meanwhile.
// A client that takes nothing for Config.WatchStall (DefaultWatchStall,
// 1 min; tether-hub --watch-stall-timeout) while its buffer is full is
// cut: the buffer is dropped and, when it reads again,
// its stream ends RESOURCE_EXHAUSTED (ErrFellBehind), to watch again from
// the last revision it received; a client that reads, however slowly, is
// never cut. WatchPlacement sends whole placements, so the changes a busy client has
// not read coalesce into one message.
//
// # Placement
//
// GetPlacement reads the binding (policy claim, clusters and replicas,
// Scheduled condition) and the rejected clusters with their reasons as the
// scheduling loop recorded them (placement.Rejections). A binding without
// that record gets them recomputed by running the pure scheduler on the
// binding's input (place.BuildInput) over the scheduling loop's view of
// the stored clusters (place.BuildMembers, with this replica's leases:
// liveness taints, capacity and API enablements; a cluster that reported
// none serves no kind). GetPlacement, WatchPlacement and WatchPlacements
// compute a placement with one function (placementOf) of the template and
// binding values.
//
// WatchPlacements follows every template a selector matches
// (placements_watch.go): one etcd watch over the key range from the
// selected bindings to the selected templates (bindings/ sorts before
// objects/), so that both kinds of change come in one revision order; the
// keys between them (clusters, liveness, meta) are read and dropped. Each
// change at revision R is sent as the placement at R: the other key of the
// pair is read at R (store.GetAt), so a replay from a revision sends the
// same messages. Changes wait in a lagQueue as Watch's do (same bounds,
// same cut). From revision 0 it first sends the current placements read
// at one revision, placementsPage (500) templates and their bindings at a
// time (placements_current.go), then a synced mark carrying that revision.
// Rejections it recomputes use the cluster list all streams share
// (placements_clusters.go): read again only when a stream needs it read at
// a later revision, that of the placements it sends or of a change of a
// cluster record its watch has read, so about once per such change
// however many streams are open, never older than either.
// Simulate runs the controllers' own functions on a template and optional
// objects laid over the stored ones, storing nothing: the template as Apply
// would store it; bind.Wanted decides the policy as the detector does (the
// stored claim honoured) and builds the spec, bind.Merge makes the binding
// (onto the stored one, whose result and permanent ID it keeps); place.Step decides as the scheduling loop
// (Config.Scheduling); work.Render computes each target's work with
// work.Candidates' override policies. What it shows for a cluster is the
// manifest that cluster's agent receives, byte for byte, with its apply
// strategy and conflict resolution (hub/simulate_test.go proves it).
// Given clusters replace the stored ones and are taken as given (no lease
// speaks for them: they must list the template's kind in
// status.apiEnablements). A template never applied has no binding yet,
// so its works lack the binding's permanent-ID label. Not yet:
// ResourceInterpreterCustomizations given to Simulate are validated but not
// used (the hub's interpreter answers), dependencies are not rendered, and
// the loop's own state (full-disruption mode, clusters at their works
// limit, application failover memory) is not known to Simulate.
//
// # Clusters
//
// ListClusters and GetCluster show the stored Cluster records (labels,
// taints, topology, registration time) overlaid with this hub replica's
// lease of each (Config.Leases): state Ready or NotReady while the lease
// is valid, Unknown when it ran out or this replica has none; lease age,
// and the last heartbeat's agent version, capacity, conditions and API
// enablements, falling back to what the record holds. Cordon adds the
// NoSchedule taint TaintCordoned, which the scheduling loop honours for new
// placements; Taint removes, then adds, admin taints (a NoExecute one
// drains). Label and Annotate set and remove labels and annotations, with
// Kubernetes' key and value validation; changing an existing key to another
// value needs overwrite (as kubectl label --overwrite). Taint, label and
// annotation changes are conditional read-modify-writes of the record
// (editCluster in cordon.go), retried on a concurrent write unless the
// client named the revision it read (resource_version: a different one is
// FAILED_PRECONDITION), and write nothing when nothing changes. The hub owns
// labels and annotations once the record exists: the agent's labels are
// only the initial value (hub/membership), heartbeats and agent restarts
// never change them, and the scheduling loop reschedules on the record's
// change. Every cluster view carries the record's revision and the record
// as a cluster.tether.io/v1alpha1 Cluster (object_json) with its status
// brought up to the last heartbeat (clusterobject.go).
// Not yet: work counts, certificate expiry and pending keys.
//
// # Quotas
//
// Apply refuses a template, a PropagationPolicy or a
// ClusterPropagationPolicy whose placement would take a namespace over a
// FederatedResourceQuota (quota.go: placed with the pipeline Simulate
// chains, usage and the decision by hub/pipeline/quota), naming the
// quota, resource, used, requested and allowed (and, for a
// ClusterPropagationPolicy, the namespace); Get of a FederatedResourceQuota
// computes its status from the namespace's bindings (quota.Status).
// Apply's fast path hands requests that a quota may concern to its quorum
// path.
//
// As in Karmada, whose webhook is the only place it checks, the quota is
// checked at apply only: what the scheduler changes on its own (a Divided
// binding's replicas moving as clusters come and go, a failover, a
// cluster gaining a label a policy selects) is never refused nor undone,
// since refusing it would leave replicas unplaced; a namespace taken over
// its quota that way shows it in the quota's status (overallUsed above
// overall), and every apply that would grow its usage further is refused
// until it is back within, while one that shrinks it is always accepted.
//
// It imports hub/store, hub/pipeline/lease (the lease type), hub/membership,
// hub/revocation, hub/roles, hub/pki, hub/pipeline (the stages Simulate chains),
// hub/pipeline/bind, hub/pipeline/place, hub/pipeline/work (the stages'
// values, which the placement queries use too), hub/pipeline/quota (the
// quota decision), internal/overrides (resource selectors),
// hub/placement (the scheduling algorithm), hub/aggregate/fold (the
// aggregator's fold), hub/pipeline/rollout (the rollout records
// RolloutService reads and steers), internal/interpreter/ and api/; never a loop
// package (hub/detector, hub/scheduler, hub/render, hub/aggregate).
package clientapi
