// Package agentapi is the hub's side of the agent protocol (DESIGN §5): the
// AgentService gRPC implementation that every member cluster's agent holds
// one outbound stream to.
//
// # A stream's life
//
// Connect takes the cluster's name from the verified client certificate
// (pki.IdentityOf; the kind must be agent) and from nothing else. Once
// Works can be read (Readiness: a restarted hub's renderer rebuilds
// first; until then the agent's Hello stays unread in the transport, not
// decoded and held for every reconnecting agent) it waits for Hello,
// supersedes any older stream of the same cluster (that one gets
// Goodbye SUPERSEDED), reads the cluster's works from Works, and answers
// Welcome, then only the difference from what the agent holds, then SyncDone
// (hub/syncstate computes all of it). From then on it follows Works.Changes
// and sends upserts and deletes, coalesced per work key so a slow agent gets
// the latest state rather than a backlog. What the agent sends goes to the
// sinks: acks and status reports of current versions to Statuses (stale ones
// are discarded), heartbeats to Leases. Every status report is validated
// first (ValidateStatusReport: each status_json empty or one JSON object of
// at most MaxStatusJSONBytes, a known health, a bounded message); an
// invalid one is refused alone, logged and counted (Config.Counts), and the
// stream goes on. After Hello, Config.Authority (hub/authority) is told how
// many works the agent holds and the store epoch and revision it has seen
// (authority.Lineage), to detect a store that lost its cluster or went
// back. Before it computes the difference, a stream waits until Works (a
// StoreFollower: the renderer) has applied the store revision the agent
// has seen, at most Config.CatchUpTimeout, then ends with Goodbye SHUTDOWN
// (lineage.go): a replica that lags never serves an older view than the
// agent holds. Welcome carries the store's epoch, the revision the works
// reflect and the operator's latest adoption (authority.Adoption), which
// the agent keeps to judge the hubs it meets (agent/doc.go).
//
// # Customizations
//
// With Config.Customizations (hub/customizations), the agent also gets the
// user's interpreter customizations: right after Welcome, ahead of the
// works, when the version its Hello names differs from the hub's set, and
// again, whole, each time the set changes (customizations.go); nothing
// before the hub has loaded its set, so an agent keeps what it holds. An
// agent whose Hello does not say customizations_supported (one that
// predates them would end the stream on the message) is sent none, and a
// warning says that the user's rules do not run in its member. The
// agent's CustomizationsAck is logged, with what it refused as a warning.
//
// # Resource models
//
// With Config.ResourceModels (hub/membership's Models), Welcome's
// Settings carry the cluster's resource models (its record's
// spec.resourceModels), and whole new Settings follow on the stream each
// time they change (models.go). The agent grades its nodes by them and
// heartbeats the count per grade (allocatable_modelings), which the
// scheduler's general estimator uses with the models.
//
// # The works limit
//
// A cluster with more works than Config.MaxWorks keeps its stream, and so
// its heartbeats and its lease: the stream serves MaxWorks of them (those
// the agent holds first, then by key) and withholds the others, which are
// neither sent nor deleted and are served as removals make room (limit.go);
// the hub logs how many are withheld. The scheduler (hub/scheduler) places
// no new workload on a full cluster and says so on the binding, so works
// are withheld only when dependencies or a lowered limit push a cluster
// over.
//
// # Goroutines
//
// Connect's own goroutine sends, and between messages follows the works'
// changes (Works.Changes, which never blocks: it gives the channel closed
// at the next change) and the resource models and customizations
// (following). It starts one more per stream, which receives; gRPC
// unblocks it only once Connect has returned, so the Server owns it and
// Close waits for it. An idle stream's goroutines are most of what it
// costs the hub: with gRPC's own three per connection, five, some 6 KiB of
// stack each.
//
// # Wiring
//
// The hub's gRPC server needs ServerOptions(cfg) (message size, keepalive,
// connection bounds, and a codec that encodes a work once for every
// stream that sends it: wire.go) and TLS credentials whose ClientCAs is the hub CA with ClientAuth
// tls.VerifyClientCertIfGiven: Register is called without a certificate,
// Connect refuses a stream without one.
//
// # Connection bounds
//
// ServerOptions bounds every connection to the gRPC server: its TLS
// handshake and HTTP/2 setup (Config.HandshakeTimeout), its time without
// any call in progress (Config.MaxConnectionIdle; a stream is a call, so a
// connected agent is never idle) and its calls at once
// (Config.MaxConcurrentStreams). A cluster has at most one live stream
// however many connections it opens: the newest supersedes the others; and
// at most Config.MaxStreamsPerCluster Connect calls in progress, Hello or
// not: past it the oldest ends (superseded). A cluster opens at most
// Config.StreamOpenRate streams a second (bursts of StreamOpenBurst; one
// a second, 40 at once by default): an agent reconnecting in a tight loop
// is refused at once with Goodbye LIMIT_EXCEEDED and a retry-after of at
// most the heartbeat interval, counted as KindStreamOpenLimit, and the
// other clusters are not affected. A status sink that refuses what a
// stream sends for a limit of its cluster (an ErrLimit, such as the
// aggregator's per-cluster relay queue) ends that stream the same way.
//
// A connection pins no read buffer of gRPC's (readBufferSize): TLS holds
// the record being read, and gRPC's own 32 KiB per connection would stay
// for the connection's life, 320 MB for 10,000 agents. What a stream has
// not read yet stays within its flow-control window, a static 64 KiB
// (streamWindow), and at most Config.MaxHellosInProgress streams read and
// act on their Hello at once (admitHello): a fleet reconnecting to a
// restarted hub waits in the transport, not decoded in memory. A stream
// held back so (or until the works are ready) keeps its cluster's lease
// valid every heartbeat interval (Toucher), so that the hub's own backlog
// never makes a connected agent look gone.
//
// # Message bounds
//
// Each stream bounds what its agent sends after Hello, per kind
// (Config.MessageRates, messagelimits.go), by token buckets far above what
// an agent sends: acks and status reports 5,000 a second in bursts of twice
// Config.MaxWorks (a resync of every work fits); heartbeats 1 a second in
// bursts of 10; certificate renewals one per 2 s in bursts of 10;
// customizations acks 1 a second in bursts of 100. A heartbeat the Leases
// refuses to hold (HeartbeatChecker: hub/liveness bounds its bytes and API
// entries) and a renewal whose CSR is over MaxCSRBytes are past the bounds
// too. Past a bound, the stream ends with Goodbye LIMIT_EXCEEDED and
// ResourceExhausted naming the cluster, the kind and the bound, counted
// as KindStreamLimit; other streams are not affected. Past a rate, the
// Goodbye's retry_after asks the agent to wait until its burst has
// refilled, at most one heartbeat interval (so its lease never runs out
// for it); it then reconnects with all it holds. What a customizations ack makes the hub
// log is clipped (ten refusals, 1 KiB each).
//
// # Registration and revocation
//
// Register (register.go), rate-limited per source address and in total
// (ratelimit.go), exchanges a bootstrap token and a
// CSR for the cluster's certificate through Config.Registry (hub/membership).
// The labels the agent asserts in its topology must be Kubernetes labels
// (INVALID_ARGUMENT naming the bad one). A new key for a registered name
// is recorded as pending and refused (FAILED_PRECONDITION) until an admin
// approves it by its fingerprint; while one key is pending, a registration
// with any other key is refused and changes nothing, so a holder of an
// unused token cannot replace it. With the hub's --new-clusters-cordoned,
// the Cluster record a registration creates starts cordoned.
// Every Connect asks the Registry whether its certificate was revoked (the
// cluster removed, or its key replaced), and Recheck, called by the hub on
// every change of an agent record, ends the streams whose certificate no
// longer passes with Goodbye CLUSTER_REMOVED.
//
// CertificateRenewal (renewal.go) is answered on the stream, which stays
// open: the Registry signs the CSR's new key with the identity of the
// stream's certificate, and the new certificate becomes the stream's, so
// that Recheck keeps passing once the old one expires. A stream opened with
// an expired certificate (on a connection older than it) is refused.
//
// It imports hub/syncstate, hub/pki, hub/authority (its Lineage and Adoption
// types), hub/guard, hub/membership, internal/grpcbuf, internal/protocol and
// the generated agent protocol; the works, statuses and leases come in
// through the small interfaces of works.go and sinks.go, which the renderer,
// the aggregator and hub/liveness implement.
package agentapi
