// Package ha is Tether's suite for several hub replicas on one etcd
// cluster (issue 12), with real parts: a 3-member etcd cluster from the
// kit's etcd binary serving clients over TLS only (certificates made by
// the test, client certificates required), three tether-hub processes on
// it sharing one CA (created once and sealed in etcd under
// --ca-encryption-key-file), two kit member clusters with a tether-agent
// each, the baseline (a Deployment divided over both members with static
// weights) and a load of ConfigMaps sent to every member, applied through
// the client API.
//
// # What it owns
//
//   - Etcd (StartEtcd): the cluster, its CA and the hubs' client
//     certificate; HubArgs are a replica's --etcd-* flags.
//   - Replica: one hub process with a fixed --listen and --metrics-listen
//     (a restarted replica serves where its agents dial), started from a
//     given binary so that a rolling upgrade replaces it by another;
//     Leading reads its tether_hub_leader.
//   - Netns: a network namespace for one replica with a veth link to the
//     host; CutFrom and Heal drop and restore its traffic with etcd's
//     client ports (iptables inside the namespace), as test/faults does
//     for agents.
//   - CA: certificates for etcd and a second hub CA for the refusal
//     scenario.
//
// The tests start a fixture per scenario. Replica 0 starts first and is
// the first leader; the leader in etcd is the lowest create revision
// under /tether/leader/ (the election's rule), whose value ends with the
// replica's listen address. Agents are given every replica's address
// (--hub a,b,c; the previous release's agents, in the upgrade scenario,
// one each); an agent picks one at random, so a scenario that needs an
// agent on a given replica restarts it until it is there (agentOnReplica,
// which reads the hub_addr of the agent's last welcome in its log).
// Every member is
// watched for deletes and UID changes (test/faults' Watcher), and every
// agent's delete and eviction counters must stay 0.
//
// # Scenarios, cheapest first
//
// Times are on two cores once the binaries are built.
//
//   - different-ca-refused (smoke, ~5 s): etcd and one replica; a replica
//     given other CA files, and one given another encryption key, must
//     exit non-zero naming the CA mismatch; the recorded CA is unchanged.
//   - leader-kill9-100-applies (full, ~25 s), leader-kill9-500-applies
//     (full, ~45 s): every agent on the leader, then SIGKILL of the
//     leader after a third of the applies;
//     applies go on through the other replicas (each tried in turn). The
//     new leader must act within 15 s, every agent that lost its stream
//     must stream again within 10 s, and every cluster must be Ready on
//     the new leader; then the checks of every scenario with a load:
//     every acknowledged apply on the hub and in every member, the
//     baseline's placement, its generation in every member and every
//     member object's UID unchanged, no delete or eviction, and the
//     baseline's aggregated status rolled out (agents' reports relayed to
//     the leader from whichever replica they stream to).
//   - rolling-restart-under-load (full, ~15 s): each replica in turn
//     stopped (SIGTERM) and started again, applies going on, a leader and
//     every agent's stream back before the next; the same checks.
//   - leader-partitioned-from-etcd (full, ~70 s; root, ip, iptables):
//     replica 0 runs in a namespace, with an agent streaming to it, and is
//     cut off etcd while it leads. It must log losing leadership within
//     its lease (10 s) and a margin and report not leading, a replica on
//     the host must take over, the applies made meanwhile must reach every
//     member within 30 s (so the cut replica's agent must move: a replica
//     without etcd has no new works for it and cannot publish its
//     heartbeats), etcd's history since the cut must hold no write under
//     the leader-only prefixes (bindings, clusters) before the old
//     leader's key was deleted, and once healed it must not lead again.
//   - rolling-upgrade-from-previous (full, ~20 s, and some 15 s to build
//     the previous release the first time): replicas and agents start
//     from binaries built at previousRelease (git archive of that commit
//     into test/.cache, go build -trimpath), then each replica is
//     replaced by this tree's, applies going on; the rolling restart's
//     checks (the aggregated status only once every replica is replaced:
//     the previous release's followers relay no statuses). A clone
//     without that commit fails the scenario saying so.
//   - leader-kill9-mid-eviction-grace (full, ~90 s): replicas with
//     --graceful-eviction-timeout 60s; a Deployment placed on one member
//     alone is drained (a NoExecute taint the baseline tolerates), so its
//     eviction task keeps the copy for the whole grace; the leader is
//     killed (SIGKILL) at 30 s. The copy must still be there then, and go
//     within 20 s after the 60 s deadline, never before it (a new leader
//     that started the grace over would take it at 90 s or later); the
//     baseline keeps its UIDs and generations, and that delete is the
//     only one an agent makes.
//   - leader-kill9-mid-rollout (full, ~60 s): a Deployment on both
//     members paced by a Progressive RolloutPolicy (one cluster at a
//     time, minSuccessTime 20 s); a new image is applied and the leader
//     killed (SIGKILL) as soon as the first member has it. Sampled from
//     the members every 200 ms: the second member takes the image only
//     once the first was ready with it for the soak (a new leader that
//     lost the rollout's state would push it at once), each member's
//     Deployment is written once (generation +1) and keeps its UID, and
//     no member goes back from the new image.
//   - store-restored-empty-replica (full, ~100 s): etcd's members restored
//     from a cold copy taken before more ConfigMaps were applied, replica
//     0 on an empty data directory, every agent on it; nothing the agents
//     hold is deleted (their Hello says what revision they saw).
//   - lagging-replica-serves-returning-agents (full, ~90 s; root, ip,
//     iptables; a hub built with -tags renderfault): replica 0 cut off
//     etcd while ConfigMaps are applied through the others; every
//     replica's renderer held behind its store (hub/render's
//     HoldFileEnv), replica 0 healed, the others stopped, so every agent
//     comes back to replica 0 while it lags, for 25 s, then the hold
//     ends. No delete, no UID change, every acknowledged ConfigMap in
//     every member, and no agent holding its hub not authoritative (a
//     replica that served its old view would be behind what they saw).
//
// Each scenario prints a FIGURES line (leader change, step-down, agent
// reconnect p50/p99, writes acknowledged/lost) for `make ha`'s summary.
//
// # Which scenarios run
//
// The smoke subset (different-ca-refused: some 10 s, the build of the
// binaries included) runs in every `go test ./...`, so in `make test`.
// TETHER_HA=full (`make ha`) runs them all, in about 9 minutes.
package ha
