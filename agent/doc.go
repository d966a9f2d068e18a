// Package agent is the member-cluster agent's composition root:
// agent.New(cfg, logger) then Run(ctx). It wires hubclient (the one
// outbound stream to the hub, reconnects, the works' reconciliation),
// state (the works held, in --data-dir or the --state-secret Secret), apply, status and capacity
// (the member cluster through client-go's dynamic client and rest, and
// agent/kube for the few typed objects and discovery; never client-go's
// typed clientset, discovery client or typed informers, which would link
// every API group into the binary: cmd/tether-agent's TestLeanDependencies
// keeps them out). It may import internal/ and api/; it never imports
// hub/ (test/layout enforces it).
//
// # Flow
//
//	cmd/tether-agent: flags → agent.Config → agent.New → Run
//	New:  check the flags, load the client certificate and the hub CA,
//	      load the local state (a corrupt file stops the agent with its path),
//	      build apply/status/capacity for the member cluster (or Config.Member)
//	      over one interpreter, loaded with the customizations the state holds
//	Run:  one screen (agent.go), each part a goroutine, one ending ends all:
//	      stream  hub ⇄ stream ⇄ books: Hello → Welcome → upserts/deletes →
//	              SyncDone → changes; acks, heartbeats, status reports out
//	      apply   books → state → member: each work's record written, then
//	              applied or deleted (every held work first, hub or no hub)
//	      evict   works orphaned past --eviction-grace → deleted
//	      state   hub identity, customizations, status digests → state
//	      member  drift repair; applied objects → status → reports → stream
//
// # Observability
//
// --metrics-addr serves the registry of newRegistry on /metrics (metrics.go):
// hubclient's tether_agent_stream_state, _works_held,
// _work_applies_total, _work_apply_duration_seconds,
// _work_deletions_total and _status_report_lag_seconds, apply's
// objects deleted and orphaned, and agent/kube's
// tether_agent_member_requests_total: every request of the agent to its
// member API server, by verb and resource (kube.Requests). --health-addr (health.go) serves /readyz,
// ready once the hub's SyncDone has arrived since the start
// (hubclient.Client.Synced) while the member API server answered its last
// check (Member.Ping, every DefaultMemberCheckEvery, cached), and /healthz,
// live while the hub client's lock can be taken and the member check goes
// on. Neither probe calls the hub or the member. Both servers start before
// registration.
//
// # Interpreter customizations
//
// The member side's interpreter is internal/interpreter, as on the hub,
// with the user's ResourceInterpreterCustomizations and webhook
// configurations the hub sends (agent/customizations): Retain before every
// write, InterpretStatus and InterpretHealth for every report, with the
// hub's precedence (Lua customization, webhook, built-in customization,
// native). A new set takes effect at once: the next apply or drift repair
// retains with it, and the status of every work is read again. The set is
// kept in the local state, so an agent restarted while the hub is
// unreachable retains with the user's rules from its first apply. Webhooks
// are called from the member cluster; one it cannot reach is named in the
// ack (Retain) or the manifest's status message (health Unknown, status).
//
// The rules cost the member what the agent allows, not what the hub
// chooses (limits.go): every Lua call may allocate --lua-memory-fraction
// of the agent's memory limit (the lower of Go's soft limit and the
// container's cgroup limit; callMemory, memoryLimit), at most 256 MiB,
// --lua-concurrency calls run at once, and a call stuck past its deadline
// is abandoned (internal/interpreter/luavm). A call past a bound fails
// like a broken rule; the agent goes on. The member's owner may refuse
// the hub's webhooks (--refuse-interpreter-webhooks) or allow only some
// hosts (--interpreter-webhook-hosts): a refused configuration is named in
// the customizations' ack, never called, and the operations its rules
// select fail saying so (customizations.WebhookPolicy).
//
// # Several hub replicas
//
// --hub takes one address (a hub, or a load balancer in front of its
// replicas) or the addresses of a hub's replicas separated by commas
// (--hub hub-0:8443,hub-1:8443,hub-2:8443; Config.HubAddrs): replicas of
// one hub, on one etcd and one CA, each serving a certificate for the host
// the agent dials it by. The agent's one stream goes to one replica, the
// order shuffled once per connection (so agents spread over the
// replicas), and when that replica goes the next stream, after the usual
// reconnect backoff, takes the first address that answers: a refused or
// unanswering address is passed over at once (hubclient.Dial). Every
// address is verified against its own host. Registration with a bootstrap
// token pins the CA from the first address that answers (a hub presenting
// another CA refuses the registration: every address must serve the
// pinned one) and sends Register to any of them; certificate renewal goes
// over the stream, to whichever replica holds it. A replica that ends the
// stream with Goodbye SHUTDOWN (stopping, or cut off from its store) is
// tried last by the next connection, after the usual backoff; with one
// address the next stream comes on a new connection, so a load balancer
// can pick another backend.
//
// # Deletion safety (DESIGN §4)
//
// The agent deletes the objects of a work it holds in exactly three cases,
// each only while it trusts the hub (below):
//
//  1. A WorkDelete from the hub identity the work came from, received on a
//     stream of that hub after its SyncDone. A WorkDelete that arrives
//     before SyncDone (the hub's initial difference puts its deletes there)
//     is held until SyncDone and dropped if the stream ends first; the hub
//     sends it again on the next stream, since the agent still lists the
//     work in Hello.
//  2. That hub's SyncDone is authoritative and its key set
//     (SyncDone.work_keys: every work of the cluster) lacks the work, which
//     the stream did not send either: the hub removed it while the agent
//     was away, however long ago and across hub restarts (reason
//     NOT_IN_HUB_SET, the work's own deletion policy). A SyncDone that is
//     not authoritative (a hub that cannot vouch for its view, or one that
//     predates the field) deletes nothing.
//  3. Eviction: the work has been orphaned for the grace period
//     (--eviction-grace, default 60m; 0 turns eviction off, orphans are
//     then kept forever).
//
// Every held work records the identity of the hub that sent it, and the
// agent records what it saw of that hub's store (agent/state.Lineage): the
// store's epoch and the highest store revision its Welcomes and upserts
// carried; Hello sends them. A hub with another identity, another store
// epoch, or whose store is behind that revision (restored from an older
// copy, whole data directory included) is held NOT AUTHORITATIVE for this
// agent: nothing is deleted on its word (its WorkDeletes and key sets are
// ignored), nothing is orphaned or evicted, and no work held is changed
// (an upsert of another version is acknowledged FAILED, saying why); new
// works are applied. Another identity or epoch is judged again at every
// Welcome (the hub the works came from may come back); a store behind
// holds until an adoption, however far it goes on. The agent says so in
// its heartbeats (condition HubTrusted=False, with why).
//
// Only an operator ends it, on the hub: tether-hub --accept-store-reset
// (or --adopt-identity OLD, naming the identity the works came from)
// records an adoption that every Welcome carries. An agent that holds the
// hub not authoritative, and has not seen that adoption before, trusts it
// again: the works the adopting hub sends or lists are claimed by it, and
// those it does not have are kept in place, unmanaged (never applied,
// deleted or evicted by the agent; named in the heartbeat's condition
// UnmanagedWorks) until a hub sends their key again, or deleted when the
// adoption says so (--adopt-delete-unknown). An adoption is accepted once:
// the agent records every adoption it sees, so a store restored to after
// an adoption cannot adopt it again with it.
//
// Works held from an earlier identity by an agent whose state predates
// adoptions (it then took a new hub's identity at once) are orphaned at
// that hub's authoritative SyncDone unless it sends them, and evicted
// after the grace period unless a hub claims them first.
//
// A decided deletion is written to the state with the work (its policy,
// reason and hub) before it starts; an agent restarted in the middle
// resumes it and never applies the work again. A work the agent could not
// write to its state (e.g. --state-secret over Kubernetes' 1 MiB) is not
// applied and is acknowledged FAILED with the reason, and written again
// with backoff. A deletion uses the policy of the WorkDelete (the work's
// own when unset); the others use the work's policy. A work is forgotten
// from the state only once its deletion succeeded; until then it is
// retried with backoff, and a new upsert of the same key cancels it.
//
// Namespaces and CustomResourceDefinitions are orphaned (kept, Tether's
// marks removed) instead of deleted unless the reason is TEMPLATE_DELETED,
// and a Namespace is never deleted while it holds an object the work does
// not own: un-placing one must not delete everything inside it. Every
// object deleted or orphaned is logged (one Info line with the hub, work,
// version, object and reason) and counted (tether_agent_member_deletes_total
// by reason, _evictions_total, _orphans_total by reason and rule; served
// with --metrics-addr).
package agent
