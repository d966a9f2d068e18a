// Package clientapi is the hub's client API (DESIGN §3): ObjectService
// (Apply, Get, List, Delete, Watch) and PlacementService (GetPlacement,
// WatchPlacement, Simulate) over the store, for tetherctl and any gRPC
// client. ClusterService, TokenService and UserService are registered too
// and answer UNIMPLEMENTED until their issue lands.
//
// # Usage
//
// The hub's composition root builds the services once and registers them on
// its gRPC server, whose transport credentials verify client certificates
// of the hub CA (tls.VerifyClientCertIfGiven or RequireAndVerifyClientCert):
//
//	api, err := clientapi.New(clientapi.Config{}, st, interp, logger) // interp: *interpreter.Interpreter, or nil
//	api.Register(grpcServer)
//
// # Authorization
//
// Every RPC reads the caller's verified client certificate (pki.IdentityOf):
// admins read and write, viewers only read (Get, List, Watch, placements,
// Simulate), agents and anything else are refused. No certificate is
// UNAUTHENTICATED, a role that may not is PERMISSION_DENIED. Errors become
// gRPC codes in one function, grpcStatus.
//
// # Apply
//
// Input is multi-document YAML, JSON values, a JSON array or a Kubernetes
// List (api/codec's limits: 3 MiB, depth, aliases, UTF-8). Each object is
// either one of Tether's kinds — decoded strictly by api/codec (Karmada's
// groups accepted), defaulted, validated, stored under Tether's group — or a
// resource template of any kind: apiVersion, kind and metadata.name are
// required, labels must be valid, and the namespace follows the kind's
// scope: built-in Kubernetes kinds are known; a custom resource takes the
// scope of its CustomResourceDefinition when one is in the input or the
// store, and is namespaced otherwise (a namespace of its own or the
// default). Unknown kinds are accepted; the interpreter treats them as
// non-replicated. Clusters and bindings are written by the hub and refused.
//
// What the hub owns is dropped from the input and ignored when comparing:
// status, and metadata uid, resourceVersion, creationTimestamp, generation,
// managedFields, selfLink and deletion fields. An object equal to the
// stored one otherwise is UNCHANGED; a changed one keeps its uid and
// creationTimestamp and gets generation+1. resourceVersion is the etcd
// revision of the value: it is not stored inside it (it is only known once
// written) but set on every read. An object larger than
// Config.MaxObjectBytes (1.5 MiB) as stored is REJECTED with its size and
// the limit.
//
// All or nothing: every object is validated and compared with the store
// first; if any is rejected (or on dry run) nothing is written and the
// others report what would have happened. The store has no multi-key
// transaction, so the writes are then made one by one, each conditional on
// the revision read (create-if-absent, update-if-unchanged). If a
// concurrent writer wins one of them, the request's earlier writes are
// undone (again conditionally) and Apply fails with ABORTED: retry. Watchers
// may briefly see such undone writes.
//
// # Reads
//
// Get and List of a template merge its binding's status into .status: the
// aggregator keeps the per-cluster items in the binding's
// status.aggregatedStatus, and reads fold them with the interpreter's
// AggregateStatus (see withStatus). Watch streams objects as stored
// (resourceVersion set, no merged status), from a revision: a compacted one
// is OUT_OF_RANGE. Label selectors filter each event on the object's new
// labels, so an object leaving a selection sends nothing. List pages
// re-read the store: later pages may see later changes.
//
// # Placement
//
// GetPlacement reads the binding (policy claim, clusters and replicas,
// Scheduled condition); the rejected clusters and their reasons are
// recomputed by running the pure scheduler on the binding and the stored
// clusters (store.ClusterKey holds a cluster.tether.io Cluster as JSON;
// a cluster that reported no API enablements counts as serving every kind).
// Simulate runs the detector-free path on a template and optional objects
// laid over the stored ones: detector.Choose picks the policy, BuildSpec
// asks the interpreter for replicas, the scheduler places on the given
// clusters (or the stored ones) with the stored binding's result as the
// previous one, and each target is rendered (replicas revised for Divided
// placements, override policies applied). It stores nothing. Not yet:
// ResourceInterpreterCustomizations given to Simulate are validated but not
// used (the hub's interpreter answers), and dependencies are not rendered.
//
// It imports the store, the scheduler, the detector's pure helpers, pki,
// internal/interpreter and internal/overrides, and the api/ packages.
package clientapi
