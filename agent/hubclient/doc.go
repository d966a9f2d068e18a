// Package hubclient is the agent's side of the agent protocol (DESIGN §4,
// §5): the one outbound gRPC stream to the hub, with keepalive, reconnects
// with capped jittered backoff, and the reconciliation of the works it
// brings.
//
// # Flow
//
//	c, err := hubclient.New(hubclient.Config{Addrs: addrs, TLS: tlsCfg, Store: store,
//		Applier: applier, Status: status, Capacity: capacity}, logger)
//	err = c.Run(ctx) // until ctx ends, or ErrClusterRemoved
//
// Run runs the client's parts, which agent.Run composes itself with the
// member side's: Stream (the stream to the hub and the Books), Apply (the
// workers), Evict and SaveState (the state writer); Close ends it. New
// reads the local state (agent/state) and queues every held work for the
// Applier, so a restarted agent reconciles what it holds while the hub is
// unreachable. Stream opens a stream:
// Hello (the hub identity last seen, the works held from it with their
// versions, the status digests reported for them), Welcome, the hub's
// upserts and deletes, SyncDone, then changes as they happen. Every upsert
// is persisted, then applied by a pool of workers (one task per work key
// at a time, a newer version replacing a waiting one, failures retried with
// backoff), and every apply result is acknowledged. An upsert that cannot
// be persisted (a state Secret over 1 MiB, a full disk) is not applied: it
// is acknowledged FAILED with the reason, logged as an error, and persisted
// again with backoff. A decided deletion is persisted (with its policy,
// reason and hub) before it starts; Run resumes the deletions a restart
// interrupted, and never applies those works again. Heartbeats (capacity)
// go every Settings.heartbeat_interval; a Customizations set is loaded
// (Config.Customizations), persisted and acknowledged (CustomizationsAck,
// naming what was refused), New loads the one the state holds before
// anything is applied, and Hello names its version so that the hub sends
// a set only when it differs; status reports are forwarded as the
// StatusSource produces them; StatusRequest asks it to send them again.
// When a stream ends the client waits (backoff.go, or Goodbye.retry_after)
// and opens another, on the same connection, except after a renewal or a
// Goodbye SHUTDOWN or REBALANCE (below); Goodbye CLUSTER_REMOVED ends Run.
//
// # The hub's limits
//
// Nothing larger than the hub's Settings.limits.max_message_bytes is sent
// (limit.go, fit): the hub would end the stream, and the same message
// would go again on the next. An oversized status report is replaced by
// one without the statuses whose manifests say how large it was, an ack
// loses its per-object results, a heartbeat keeps only the agent version;
// each is logged and counted (tether_agent_oversized_messages_total, on
// Config.Registerer), and the stream goes on. Hello, sent before the
// Settings of its stream, is not checked.
//
// # Several hub addresses
//
// Config.Addrs may list the replicas of one hub. Dial gives gRPC all of
// them: pick_first over the addresses shuffled once per connection, so
// agents spread over the replicas and each holds its one stream to one of
// them. When the stream's replica goes, the next stream (after the
// reconnect backoff) takes the first address that answers; one that
// refuses, or does not answer within pick_first's 250 ms happy-eyeballs
// delay, is passed over at once, and each address has its own connection
// backoff. Each address is verified for its own host. One address is
// dialed as before, through gRPC's dns resolver.
//
// A replica that cannot serve (cut off from its store, shutting down)
// ends the stream with Goodbye SHUTDOWN, and refuses new streams the same
// way, while its TCP connection stays up: on the same connection the next
// stream would reach it again. (REBALANCE, which the protocol reserves
// for a hub shedding load and today's hub never sends, is handled alike.)
// So after such a Goodbye the client waits as after any stream, then
// closes the connection and dials a new one (moveon.go) whose order puts
// the address that said goodbye last, after the others shuffled;
// pick_first comes back to it only if none of the others answers. The address is the
// configured one whose host is the stream's peer IP (a host name is
// looked up, within 2 s) on its port; when none is (a proxy in between),
// the new connection shuffles them all. The addresses that said goodbye
// since the last stream that reached SyncDone are all tried last, the
// most recent one last of all, so one of three replicas refusing costs
// one refused stream and one backoff, two of three at most two. With one
// address (a load balancer in front of the replicas) the next stream also
// comes on a new connection, which the balancer may send to another
// backend. A new connection is lazy: it costs the TCP and TLS handshakes
// of the next stream, like any reconnect after a hub restart, and
// presents the current certificate. Goodbye SUPERSEDED (another stream of
// the cluster took over) keeps the connection.
//
// # Certificate renewal
//
// With Config.Credentials, the client asks the hub over the stream for a
// certificate for a new key at 70–80% of its certificate's lifetime
// (renewal.go), retries a refusal with backoff before expiry, and installs
// the answer through Credentials; the stream stays up. The next stream
// comes on a new connection, whose handshake presents the new certificate.
//
// # State I/O
//
// Writes to the state (agent/state; a Secret's take up to 30 s when the
// member API server is slow) never run under the client's lock nor on the
// stream's goroutine: Books decide under the lock, a worker writes a
// work's record and then applies or deletes it (persist, reconcile.go),
// and the state writer (writeState) writes the hub identity, the
// customizations and the digests (these at the first 5-s tick without a
// new report, at most a minute late while reports keep coming:
// digestpace.go). A hung write holds the writes after it
// (the Store takes turns), so new works wait to be applied, but the
// stream, heartbeats, status reports and acks go on.
//
// # Pure state
//
// Books holds what the hubs have told the agent and decides, for each
// event, what to persist, apply, delete and send (Effects). It does no I/O
// and is tested with tables; stream.go, handle.go and reconcile.go are the
// thin I/O around it. The deletion rules live there (see agent/doc.go).
//
// # Metrics and health
//
// With Config.Registerer the client registers (metrics.go): the stream's
// state (tether_agent_stream_state: disconnected, connecting, syncing,
// synced), the time of the last SyncDone, the works held, each apply of a
// work by result and its duration, each deletion carried out by reason,
// the status reports' lag (observed → sent), and the oversized messages.
// Synced says a SyncDone has arrived since New, and Alive that the lock
// every part takes can be taken: agent's /readyz and /healthz.
//
// # Goroutines
//
// Each part owns its goroutines and returns once they have exited, and
// Run (or agent.Run) owns the parts: applyWorkers workers (Apply), the
// eviction check (Evict), the state writer (SaveState), and, per stream
// (Stream), the
// receiver and the heartbeat builder (stopped and waited for when the
// stream ends). Only the stream's goroutine sends on it.
//
// It imports agent/state, the generated agent protocol, internal/backoff,
// internal/hubdial and internal/protocol, never hub/.
// Test helpers (a fake hub on real gRPC and TLS) are in hubtest.
package hubclient
