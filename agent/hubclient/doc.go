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
// Run loads nothing more (New read the local state, agent/state) and first
// queues every held work for the Applier, so a restarted agent reconciles
// what it holds while the hub is unreachable. It then opens a stream:
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
// go every Settings.heartbeat_interval; status reports are forwarded as the
// StatusSource produces them; StatusRequest asks it to send them again.
// When a stream ends the client waits (backoff.go, or Goodbye.retry_after)
// and opens another; Goodbye CLUSTER_REMOVED ends Run.
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
// # Certificate renewal
//
// With Config.Credentials, the client asks the hub over the stream for a
// certificate for a new key at 70–80% of its certificate's lifetime
// (renewal.go), retries a refusal with backoff before expiry, and installs
// the answer through Credentials; the stream stays up. The next stream
// comes on a new connection, whose handshake presents the new certificate.
//
// # Pure state
//
// Books holds what the hubs have told the agent and decides, for each
// event, what to persist, apply, delete and send (Effects). It does no I/O
// and is tested with tables; stream.go, handle.go and reconcile.go are the
// thin I/O around it. The deletion rules live there (see agent/doc.go).
//
// # Goroutines
//
// Run owns them all and returns once they have exited: applyWorkers
// workers, the eviction check, the digest writer, and, per stream, the
// receiver and the heartbeat builder (stopped and waited for when the
// stream ends). Only the stream's goroutine sends on it.
//
// It imports agent/state and the generated agent protocol, never hub/.
// Test helpers (a fake hub on real gRPC and TLS) are in hubtest.
package hubclient
