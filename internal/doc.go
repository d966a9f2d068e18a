// Package internal holds code that both the hub and the agent use (or that
// tools and tests share), one package per concern:
//
//   - backoff: the one retry backoff of agent and hub (a delay per failure
//     count, capped, with jitter)
//   - certs: certificate primitives (keys, CSRs, PEM, CA hash pins)
//   - clientconfig: the credentials file of a hub client (admin.conf)
//   - durable: files written whole and synced (temporary file, fsync,
//     rename, fsync of the directory): the CA, keys, admin.conf, records
//   - fuzzframe: protocol messages as one fuzz input, for the fuzz tests
//     of both ends of the agent stream
//   - gcflags: the Go runtime's memory settings as the commands' flags
//     (--gc-percent, --memory-limit)
//   - grpcbuf: the buffer pool of the hub's gRPC traffic
//   - hubaddr: the hub addresses an agent dials
//   - hubdial: one gRPC connection to a hub's replicas, each address
//     verified for its own host
//   - interpreter: the resource interpreter (native, Lua, third-party and
//     webhook customizations behind one facade)
//   - memberreq: what both ends of the member proxy decide about a
//     request (its verb and whether it only reads; the tether: identity)
//   - leakcheck: a test binary fails when its tests leave goroutines behind
//   - logging: the go-hclog loggers the processes hand to their parts
//   - overrides: override policies applied to a template, and the
//     resource-selector and cluster-affinity matching the detector and the
//     scheduler share
//   - pprofserve: Go's profiles on the commands' --pprof-addr
//   - protocol: the timing contract of the agent protocol (heartbeat,
//     lease, keepalive, reconnect delay)
//   - tunnelconn: a net.Conn over one gRPC stream of the member proxy's
//     tunnels, and an in-process listener of them
//   - runtest: a component's Run(ctx) error run in a test as its owner
//     would, stopped and waited for at the test's end
//   - version: the build's version
//
// It may import api/ and libraries, never hub/, agent/, cmd/ or test/
// (test/layout checks it).
package internal
