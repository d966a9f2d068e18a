// Package membership is how a cluster becomes and stays a member of the
// hub (DESIGN §8): the bootstrap tokens agents register with, the key each
// cluster name is bound to (approval and rejection of a new key, removal),
// the certificates signed on Register and Renew, the Cluster record created
// at a cluster's first heartbeat (cordoned when the hub says so), and the
// resource models the agents are sent. Liveness (leases, heartbeats) is
// hub/liveness, the agents' gRPC service hub/agentapi, the CA hub/pki.
//
// # Tokens
//
// A token is "<id>.<secret>" as in kubeadm: six and sixteen characters of
// [a-z0-9]. The id is public (it names the token in `tetherctl token list`);
// only the SHA-256 of the secret is stored, at store.TokenKey(id). A token
// expires, may be bound to one cluster name, and may allow a number of
// registrations (0: any number until it expires). Expired tokens are pruned
// when tokens are listed or created; used-up ones stay until they expire, so
// that a second use is refused as "used up" rather than "unknown".
// Registrations that share a token take turns at its use count on one
// replica, so a fleet installed at once with one token of unlimited uses
// is not refused for racing itself.
//
// # Agents
//
// store.AgentKey(name) binds a cluster name to the fingerprint
// ("sha256:<hex>" of the SubjectPublicKeyInfo) of the key its agent
// registered. Register signs a CSR only when the name is free, removed, or
// bound to the CSR's own key; a new key for a bound name (or for a cluster
// that exists without a binding, minted with `tether-hub mint-agent`) is
// recorded as pending and refused until Approve, which needs the pending
// key's fingerprint. A pending key is never replaced: while one is
// pending, a registration with any other key is refused and recorded
// nowhere, until Approve or Reject decides the pending one. Register also
// refuses topology labels that are not Kubernetes labels (ValidateLabels),
// and creates the Cluster record (NewRecord, cordoned with
// Config.NewClustersCordoned). Remove tombstones the binding; Authorize,
// called on every agent stream, refuses the certificates of removed
// clusters and of keys that are no longer the bound one. Watch reports
// every change, so the agent service can end streams whose certificate was
// just revoked.
//
// # Renewal
//
// Renew, asked over an agent's stream, signs a CSR for a new key with the
// cluster name of the stream's certificate (never a name from the message)
// and binds the name to the new key. The key of the certificate that asked
// stays accepted as the previous key until that certificate expires, so
// that neither the live stream nor a reconnect racing the agent's reload is
// refused; after it, and at once after Remove or an approved replacement,
// only the new key is.
//
//	r := membership.NewRegistry(st, ca, membership.Config{}, logger)
//	tok, info, err := r.CreateToken(ctx, membership.TokenOptions{TTL: time.Hour, Uses: 1})
//	res, err := r.Register(ctx, membership.Request{Token: tok, Cluster: "edge-1", CSRPEM: csr})
//	err = r.Authorize(ctx, "edge-1", peerCert) // on Connect
//	res, err = r.Renew(ctx, membership.Renewal{Cluster: "edge-1", Cert: peerCert, CSRPEM: csr})
//
// The decisions (token checks, key binding) are pure functions of the stored
// records and the request, tested with tables; Registry wraps them in
// conditional store writes.
//
// # Cluster records
//
// The Registrar records the member clusters the hub has met under
// /tether/clusters/<name>, where the scheduler and the client API find
// them. An agent gets its client certificate either by registering with a
// bootstrap token (Registry.Register, through agentapi's Register) or from
// an admin (`tether-hub mint-agent`); either way the certificate's common
// name is the cluster's name, and the first heartbeat on its stream
// creates the Cluster record, with the topology the agent reported as its
// provider, region and zones, and the APIs it serves. Labels that are not
// Kubernetes labels (ValidateLabels) are left out of it, with a warning
// (Register refuses them outright). With NewClustersCordoned (the hub's
// --new-clusters-cordoned) a new record starts with the NoSchedule taint
// TaintCordoned, so nothing is placed there until an admin uncordons it;
// NewRecord builds every first record, Register's too. An existing record
// is never replaced: what an admin set there (labels, annotations, taints,
// through the client API's ClusterService) stays. The labels the agent
// reports (tether-agent --labels) are only the initial value of a new
// record; once it exists the hub owns them, and an agent restarting or
// registering again with other labels changes nothing (`tetherctl label
// cluster` does). Only its status.apiEnablements follows the agent's
// heartbeats, rewritten when they change (a CRD installed in the member),
// so that the client API's placement queries and Simulate, which read the
// record, see the kinds the scheduler (which reads the lease) sees.
// Liveness and capacity are hub/liveness' leases, not this record.
//
// Only the leader runs the Registrar (hub/leader), and it registers only on
// a heartbeat received after it started: leases outlive their clusters (a
// removed cluster's lease stays in every replica's memory, and a new
// leader's leases come from liveness records up to a lease old), so a new
// leader must not re-create the record of a cluster an admin removed. A
// live cluster is renewed within a quarter of a lease and registered then.
//
// Clusters met at once (a fleet connecting after an install or a hub
// restart) get their records created concurrently, so that etcd commits
// them together, and a record just created is not read back.
//
//	r := membership.NewRegistrar(st, leases, logger, membership.NewClustersCordoned(false))
//	err := r.Run(ctx) // follows leases.Wait, creates missing records
//
// # Resource models
//
// Models (models.go) follows every record's spec.resourceModels for the
// agent streams of its replica (hub/agentapi sends them in Settings); it
// runs on every replica, not only the leader:
//
//	m := membership.NewModels(v, logger) // v: the replica's *view.View
//	err := m.Run(ctx) // follows /tether/clusters/ in the view
//	models, changed := m.ResourceModels("edge-1")
//
// Log components keep the names of the packages this one was merged from:
// the Registry logs as "tokens", the Registrar as "registration", Models as
// "cluster_models".
//
// It imports hub/store, hub/view, hub/pki, hub/pipeline/lease, internal/certs,
// api/cluster/v1alpha1 and the generated agent protocol.
package membership
