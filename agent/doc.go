// Package agent is the member-cluster agent's composition root:
// agent.New(cfg, logger) then Run(ctx). It wires hubclient (the one
// outbound stream to the hub, reconnects, the works' reconciliation),
// state (the works held, in --data-dir or the --state-secret Secret), apply, status and capacity
// (the member cluster through client-go). It may import internal/ and
// api/; it never imports hub/ (test/layout enforces it).
//
// # Flow
//
//	cmd/tether-agent: flags → agent.Config → agent.New → Run
//	New:  check the flags, load the client certificate and the hub CA,
//	      load the local state (a corrupt file stops the agent with its path),
//	      build apply/status/capacity for the member cluster (or Config.Member)
//	Run:  the member side's loops (drift repair, status) and hubclient.Run,
//	      which first re-applies every held work (hub or no hub), then holds
//	      the stream: Hello → Welcome → upserts/deletes → SyncDone → changes
//
// # Deletion safety (DESIGN §4)
//
// The agent deletes the objects of a work it holds in exactly two cases:
//
//  1. A WorkDelete from the hub identity the work came from, received on a
//     stream of that hub after its SyncDone. A WorkDelete that arrives
//     before SyncDone (the hub's initial difference puts its deletes there)
//     is held until SyncDone and dropped if the stream ends first; the hub
//     sends it again on the next stream, since the agent still lists the
//     work in Hello.
//  2. Eviction: the work has been orphaned for the grace period
//     (--eviction-grace, default 60m; 0 turns eviction off, orphans are
//     then kept forever).
//
// Every held work records the identity of the hub that sent it. When a hub
// with another identity welcomes the agent (the hub's store was rebuilt, or
// the agent was pointed at another hub), the agent keeps everything it
// holds and goes on applying it; it adopts the new identity for what the
// new hub sends: a work the new hub sends is claimed by it (its origin
// becomes the new hub). At the new hub's SyncDone, every work still from
// the old identity is marked "orphaned from hub X" (with the time, in the
// state file); no word of the new hub can delete it (Hello lists only the
// works of the identity it names, and a WorkDelete for a work of another
// hub is ignored). An orphan is evicted after the grace period unless a
// hub claims it first by sending it. Works from the same hub that the hub
// mentions neither way are kept: the protocol gives no way to tell them
// from works the hub holds unchanged, and the hub deletes what it knows
// is gone.
//
// A deletion uses the policy of the WorkDelete (the work's own when
// unset); an eviction uses the work's policy. A work is forgotten from the
// state only once its deletion succeeded; until then it is retried with
// backoff, and a new upsert of the same key cancels it.
package agent
