// Package syncstate is the pure protocol state of one agent stream on the hub
// (DESIGN §5): what the agent holds as far as the hub knows, what is queued
// for it, what it acknowledged, and which of its reports are current. It
// does no I/O and starts no goroutine; hub/agentapi drives it from the
// stream, under its own lock, and it is tested with tables.
//
// # Usage
//
//	s := syncstate.New(syncstate.Input{
//		HubIdentity: id,            // this hub's identity
//		Hello:       hello,         // the agent's first message
//		Desired:     works,         // the cluster's works served now
//		Withheld:    over,          // keys of its works not served (over its limit)
//		Gone:        removals,      // of DeleteCandidates(id, hello, works): those the hub knows are gone
//		Digests:     digests,       // the status digests the hub holds
//	})
//	for msg := s.Next(); msg != nil; msg = s.Next() {
//		send(msg) // upserts, deletes, SyncDone, then a StatusRequest if needed
//	}
//	s.Apply(changes...)          // later changes: queued, coalesced per key
//	if s.AcceptStatus(report) {} // false for a stale version: discard it
//
// # Deletion safety
//
// A WorkDelete goes out only for a key the agent holds from this hub: keys
// from its Hello when Hello.last_hub_identity is this hub's identity (and
// the hub positively knows them gone), or keys this session sent. An agent
// whose works came from another hub identity gets every work again and no
// deletes for what it already had.
//
// SyncDone carries the key set of Input.Desired, of the keys of
// Input.Withheld the agent holds (works over the cluster's limit: kept,
// neither sent nor deleted) and of the Keep entries of Input.Gone
// (SyncDone.work_keys) with authoritative set, unless
// Input.NotAuthoritative: the agent then deletes the works it listed in
// Hello that the set lacks and that the stream did not send, which covers
// removals the hub no longer remembers. A hub that cannot vouch for its
// view (its store looks lost or regressed) must set NotAuthoritative. Every WorkDelete carries its removal's reason (Change.Reason).
//
// # Coalescing
//
// Outbound work messages go through a Queue keyed by work key: a newer
// version replaces a queued older one in place, and a removal replaces a
// queued upsert, so an agent that reads slowly gets the latest state, not a
// backlog. Whether a dequeued entry still needs sending is decided when it
// leaves the queue (an upsert of the version the agent already holds, or a
// delete of a key it does not hold, is dropped).
//
// It imports only the generated agent protocol (api/gen/tether/agent/v1).
package syncstate
