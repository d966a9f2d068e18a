// Package hub is the hub's composition root and nothing else:
// hub.New(cfg, logger) checks the configuration, Run(ctx) is the whole
// process, wiring the subpackages, which own one responsibility each; pure
// logic (placement, render) does no I/O.
//
// # What Run does
//
//  1. Opens the store (hub/store): an embedded etcd in DataDir/etcd, or the
//     external cluster of EtcdEndpoints (over TLS with EtcdTLS; a first
//     request bounded by 10 s, so an unreachable etcd fails the start
//     naming the endpoints); reads the hub identity.
//  2. Opens the CA (hub/cabootstrap): the files CACertFile/CAKeyFile, or
//     the CA sealed in etcd under CAEncryptionKeyFile's key (created and
//     sealed by the first replica), or else DataDir/pki, created on first
//     start (hub/pki). The first replica on a store records the CA's hash
//     there; a replica whose CA differs is refused, naming both hashes.
//     Then binds the gRPC port (and the metrics port), so that a port in
//     use fails the start. Checks the store against what the hub recorded
//     next to the CA (hub/authority, DataDir/pki/store-epoch.json): a store
//     wiped, replaced or restored from an older snapshot makes the hub not
//     authoritative (no work removed, nothing vouched gone, metric
//     tether_hub_authoritative 0) until a start with AcceptStoreReset
//     (--accept-store-reset). open.go does steps 1 and 2.
//  3. Builds every part over them (wire.go): the interpreter, cluster
//     leases, the replica's view of the store (hub/view: one list+watch,
//     decoded once, that the renderer, the scheduler, the detector, the
//     aggregator, the customizations watcher, the revoked users and the
//     users' roles read), the renderer (agentapi.Works) and the aggregator
//     (agentapi.Statuses); one gRPC server over TLS (serving certificate
//     for 127.0.0.1, ::1, localhost, the host name, the listen host and
//     TLSSANs, valid for ServingCertLifetime and re-issued at about two
//     thirds of it while the hub runs, hub/serving) with AgentService, the
//     hub.v1 client services, gRPC health and reflection; the store watch
//     (hub/storewatch).
//  4. Runs the table of tasks (tasks.go): each task has a name, a run
//     function and whether it runs on every replica or only while this one
//     leads. Every replica runs authority, leases, the liveness publisher
//     and follower (hub/liveness: agents' heartbeats go to etcd and come
//     back to every replica's leases), the reports relay (hub/aggregate:
//     agents' acks and status reports go to etcd and come back to every
//     replica's aggregator; a hub on its embedded etcd, the only replica,
//     holds them in memory), customizations (stored RICs and webhook
//     configurations into the interpreter), the view, render, revocation,
//     the gRPC server, the clusters' resource models, the user revocations
//     and roles (hub/roles), the store watch, the serving certificate's and
//     admin.conf's renewals
//     (hub/adminconf) and the metrics server, plus the leader election
//     (hub/leader). While this replica leads, a group of its own runs the
//     controllers that write decisions: registration, detector, scheduler
//     (with eviction), aggregate (with the pruning of removed
//     clusters' relayed reports), the WorkloadRebalancer loop
//     (hub/rebalancer) and rollout (hub/rollout), all writing through a store view fenced
//     by the leadership (store.Fenced); it ends as soon as leadership is
//     lost, and the next term starts a new registrar and detector. A
//     single hub on its embedded etcd, the only replica there can be,
//     leads without an election until it stops (hub/leader's Alone). The
//     first task to fail cancels the others; Run returns only after all
//     have returned. A panic is not a failure: controllers skip the key
//     that panics, the group starts a task that panicked again after a
//     delay, and a gRPC handler's panic fails that call alone; each is
//     logged and counted (tether_hub_controller_errors_total).
//  5. Announces itself: writes DataDir/admin.conf on the first start (an
//     admin client certificate for a year; server is the listen address,
//     127.0.0.1 when listening on 0.0.0.0 or ::); of an existing one only
//     the certificate is renewed, once two thirds of it have passed (at
//     start and hourly while running), the rest kept (hub/adminconf);
//     writes DataDir/hub.addr (the actual address, rewritten at every start,
//     so --listen 127.0.0.1:0 works for tests and tools; removed on a
//     graceful stop); logs the address and the CA hash agents pin.
//
// On ctx's end the gRPC server turns health NOT_SERVING, says Goodbye to
// every agent stream (agentapi.Server.Close), lets calls finish for up to
// 10 s, and every controller stops; then the store closes.
//
// # A store that does not answer
//
// A replica of several, on an external etcd, that has not reached its
// store for 10 s (hub/storewatch decides, discounting reads a process
// starved of CPU ran late) ends its agents' streams with Goodbye SHUTDOWN
// saying why, refuses new ones and reports not ready (/readyz, gRPC
// health) until a read succeeds and its rendered works have caught up, so
// that its agents move to a replica that can serve them. A hub alone on
// its embedded etcd logs the loss and its end, stays ready and keeps its
// agents.
//
// # Clusters before bootstrap tokens
//
// `tether-hub mint-agent` issues an agent certificate from DataDir/pki; an
// agent connecting with it is the cluster named in it, and its first
// heartbeat registers the cluster (hub/membership).
//
// The hub may import internal/ and api/, never agent/.
package hub
