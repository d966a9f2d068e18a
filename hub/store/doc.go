// Package store is the hub's persistent state in etcd, through the etcd v3
// client: an embedded single-member etcd in the hub's data directory by
// default, or an external cluster given by endpoints. It owns the key layout
// and the mapping of etcd errors to the package's sentinel errors; it knows
// nothing of what the values mean (callers store JSON).
//
// # Connecting
//
// An external cluster is reached over TLS when Config.TLS names files (the
// CA of etcd's serving certificates, the hub's client certificate and key);
// an http:// endpoint with TLS files is refused rather than dialled in
// plaintext. Open makes a first request bounded by 10 s: an unreachable
// cluster, or one that refuses the hub's TLS, fails the start with the
// endpoints named instead of hanging it.
//
// # Durability
//
// A write returns only after etcd has committed it, and etcd commits only
// after its write-ahead log is fsynced (the embedded member never runs with
// unsafe-no-fsync). So a write the hub acknowledges to a client survives a
// kill -9 of the hub.
//
// The embedded member keeps 100 raft log entries in memory after each
// compaction of its log (catchUpEntries), not etcd's 5,000, which are
// there for followers to catch up from: it has none.
//
// # Reads
//
// Get, List and Count are quorum reads: etcd answers them once it has
// applied everything committed when they arrived, so on a busy store they
// wait behind the write-ahead log fsyncs in progress, about as long as a
// write; GetAll reads many keys in one such round per 128. ListEach lists
// a prefix 64 keys per round, all at the revision of the first, and hands
// each key to its caller, so that a controller starting over a thousand
// bindings of 150 KiB never holds their encodings all at once. GetLocalAll is
// a serializable read the member answers at once, for a decision a
// conditional write (Create, Update, Delete with a revision) or Unchanged
// checks before it counts. Requests counts the reads and writes made so far.
//
// # Key layout
//
// Every key starts with "/tether/". Namespaced objects use their namespace;
// cluster-scoped ones use "_" (never a valid namespace name). A group is the
// canonical API group ("core" for the legacy group), so Karmada's alias groups
// land on the same key as Tether's.
//
//	/tether/objects/<group>/<Kind>/<namespace|_>/<name>   what users applied: templates (any kind) and policies
//	/tether/bindings/<group>/<Kind>/<namespace|_>/<name>  one binding per template: placement and status summary
//	/tether/clusters/<name>                               registration, identity, labels, taints, last capacity
//	/tether/tokens/<id>                                   bootstrap tokens (hashed)
//	/tether/agents/<name>                                 the key a cluster's agent registered, pending replacement, removal
//	/tether/revoked-users/<name>                          a revoked user: certificates of that name issued until then are refused
//	/tether/user-roles/<name>                             a user's role (admin, editor, viewer) and the namespaces it is bound to (hub/roles)
//	/tether/liveness/beat/<name>                          a cluster's renewal, by the replica holding its stream (etcd lease)
//	/tether/liveness/hb/<name>                            that cluster's last heartbeat, written when its content changes
//	/tether/reports/<cluster>/<work key>                  a work's last ack and status report in a cluster, relayed by any replica (hub/aggregate)
//	/tether/rollouts/<work key>                           a rolled-out work's rollout state and its template's recent contents (hub/rollout, leader)
//	/tether/leader/<lease id>                             leadership campaign keys (hub/leader)
//	/tether/scheduler/noexecute-floor                     when the last full disruption ended (hub/scheduler)
//	/tether/meta/format                                   the store's format number (format.go): which versions read it
//	/tether/meta/identity                                 the hub identity, created on first start (never on a store that holds data: Identity)
//	/tether/meta/epoch                                    the store epoch: a random id written once, when the store is new
//	/tether/meta/checkpoints/<replica>                    a counter each hub replica raises (hub/authority)
//	/tether/meta/adoption                                 the operator's latest adoption of the fleet (hub/authority)
//	/tether/meta/ca-hash                                  the hub CA's hash, recorded by the first replica to start
//	/tether/meta/ca                                       the CA sealed with the replicas' encryption key, when they share it that way
//
// Works are not stored: they are derived from the above (DESIGN §3), which is
// why the key count grows with templates + clusters, not their product.
//
// It imports the etcd client, the etcd server (its embed package),
// internal/grpcbuf and zap (the etcd server's logger), never hub/ (its other
// packages).
package store
