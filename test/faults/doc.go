// Package faults is Tether's fault suite with real parts (issue 11): a
// hub, agents and member clusters as processes (test/fleet, test/kit), the
// agents in network namespaces behind NAT, and faults injected with
// iptables, signals and the kit's API server controls, while every member
// is watched for deletes.
//
// # What it owns
//
//   - Net: the scenario's network, all in namespaces it creates. A router
//     namespace forwards and masquerades between the hub's namespace and
//     one namespace per agent, so the hub only ever sees the router's
//     address and has no route to an agent; the router also drops and
//     counts any new connection from the hub's side. Partition and Heal
//     insert and delete iptables DROP rules on the router for one agent's
//     link to the hub, PartitionAll and HealAll for all of them.
//     HubDialOuts counts the connections the hub's namespace opens (it
//     must stay 0: the hub never dials out) and InboundAttempts those
//     attempted towards an agent. Close removes everything.
//   - Proxy and AgentKubeconfig: the member API servers listen on the
//     host's 127.0.0.1 (the kit's choice), which an agent's namespace
//     cannot reach; a Proxy in the test process forwards from the host's
//     address on the router's link, and the agent's kubeconfig names it
//     (verified as "localhost", a name of the kit's certificate).
//     SetDelay holds the member's answers back, to land a fault between a
//     change in a member and the agent hearing of it.
//   - Watcher: a list+watch per member and tracked resource, counting
//     spurious deletes (a DELETED event, a changed UID, or an object
//     missing when it lists again after its watch broke) and, where a
//     scenario deletes on purpose, objects that come back.
//
// The tests (TestFaults, TestHubNeverDialsOut, TestMemberProxyUnderNAT)
// start a fleet per scenario
// with the demo's clusters and workloads (examples/nginx.yaml and
// examples/overrides.yaml), inject the fault and print a FIGURES line:
// spurious deletes (asserted 0), time to Unknown (when the hub first
// reported each cluster not Ready), time to converge after the fault
// ended (every cluster Ready and the members holding the objects of
// before, with their replicas; asserted within a bound), and the hub's
// dial-outs and inbound attempts (asserted 0).
//
// # Which scenarios run
//
// A smoke subset runs in every `go test ./...` (so in `make test`): a
// malformed status, and TestHubNeverDialsOut. TETHER_FAULTS=full (what CI
// runs, `make faults FAULTS=full`) adds the scenarios of a minute or two
// (kubectl get, logs, exec and port-forward through the hub's member proxy
// with dial-outs 0 and an exec cut by a partition, one cluster partitioned
// for 60 s, the hub paused for 70 s, an agent
// paused 80 s, every cluster partitioned, kill -9 of the hub during
// applies and of an agent during a delete, a member API server stopped, a
// policy deleted and re-created, an undecodable binding, the store wiped
// with the CA kept, every cluster pushed over the hub's works limit, a
// status flood, the hub restarted with one key's render panicking and
// with applying one key's stored objects panicking (a hub built with
// -tags renderfault) and with its works limit lowered below what the
// agents hold, a data directory restored, the identity deleted),
// and TETHER_FAULTS=all (`make faults`) the long ones too (10 min
// partition, 15 min hub pause, a flapping link, a store restored from an
// older copy).
//
// # Requirements
//
// Root (CAP_NET_ADMIN), ip and iptables on PATH (netdeps.sh installs them
// on Debian; `make test`, `make faults`, `make ha` and .ci/run call it)
// and network namespaces in the kernel. Without them the tests fail,
// saying what is missing: they never skip.
package faults
