// Package load is Tether's load tool (DESIGN §10, "Scale"): N simulated
// agents in worker processes against one real tether-hub process on its
// embedded etcd, with the hub's latency, memory and CPU measured per
// scenario and plotted.
//
// # Parts
//
// The driver (Run) starts tether-hub on a fixed port of 127.0.0.1, applies
// one PropagationPolicy that Duplicates every labelled ConfigMap to every
// cluster, and starts Config.Workers worker processes (`tether-load
// worker`, RunWorker), each hosting its share of the agents. A simulated
// agent is the real agent protocol stack: agent/hubclient over mutual TLS
// with its state (agent/state) in memory; only the member cluster is
// simulated (member.go): it records each work, acks it applied and
// reports it healthy. Agents enroll with certificates minted from the
// hub's CA (EnrollMint, as `tether-hub mint-agent`), or register over the
// agent protocol with one bootstrap token of unlimited uses (EnrollToken),
// which the hub serves at 10 registrations a second at most.
//
// Workers collect garbage at DefaultWorkerGCPercent (400) under a soft
// memory limit that shares half of the machine's memory among them (at
// most 2 GiB each; Config.WorkerGCPercent, Config.WorkerMemoryLimit): a
// worker's one heap holds hundreds of agents' state, and at Go's 100 its
// collector took CPU the hub on the same cores then lacked.
//
// The workers report to the driver over one TCP connection each (JSON
// lines, control.go): each agent's SyncDone with what the hub sent before
// it, and when an agent holds the expected number of works of a template
// generation (the GenAnnotation the driver bumps). The driver times the
// scenarios from those events: agents and driver share the machine's
// clock.
//
// # Scenarios
//
// idle (hub RSS and CPU with every agent connected), fanout (one template
// change until every agent holds it), works (Config.WorksPerAgent
// templates Duplicated to every agent until every agent holds them all),
// restart (hub kill -9 and start: time until every agent has synced
// again, and the upserts and bytes sent for works the agents already
// held, which should be none), storm (every agent reconnects within a
// jitter window) and flap (a fraction of the agents go down and up while a
// change goes out).
//
// # Output
//
// Config.Dir receives results.json (every figure, the machine's load
// average with them, and the hub's RSS and CPU once a second),
// latency-cdf.png and hub-memory.png (gonum.org/v1/plot), the hub's log
// and each worker's. With Config.CountKeys the hub is stopped at the end
// and the keys of its etcd counted.
//
// The command is test/load/cmd/tether-load; `make load` runs the full
// scenarios, and this package's test a smoke run of a few agents.
//
// It imports hub (for its data directory's layout), hub/pki and hub/store
// (to mint certificates and count keys), agent/hubclient, agent/state, the
// generated agent protocol, the generated hub API, internal/certs,
// internal/clientconfig, test/fleet and test/proc.
package load
