// Package bench runs the Karmada baseline's workload (shared/bench/
// karmada-baseline.md) on Tether and straight into the member clusters,
// and reports the two next to Karmada's recorded figures.
//
// # What runs
//
// Run starts a fleet (test/fleet): a real tether-hub and one real
// tether-agent per member, the members from the test kit, each with
// Config.Nodes kwok nodes of 32 CPU / 256Gi / 110 pods and its own
// controller manager and scheduler. The hub gets the Namespace bench
// (which it propagates); the limit's namespace bench-direct is created in
// every member. Then, for each run and each variant (Duplicated 3
// replicas with the image update; Divided, Weighted 1:1:1, 6 replicas):
//
//   - tether: at t0 one Apply of the PropagationPolicy, then one Apply per
//     Deployment (nginx:1.25), one after another; the update applies every
//     template again with nginx:1.27; the delete deletes every template,
//     one after another (the policy afterwards, untimed).
//   - direct (the limit): the same Deployments, with each member's share
//     of replicas, created, JSON-patched and deleted with client-go
//     straight in every member, one after another per member and the
//     members at the same time (as the agents write), without client-side
//     throttling.
//
// Between runs it waits until no pod of the namespace is left.
//
// # Milestones
//
// A watch of the benchmark's Deployments in every member, opened before
// the first t0, times the members' milestones: all copies exist (with
// their replicas), all ready, all carry the new image, all rollouts
// complete (updated = ready = available = replicas, generation observed),
// all gone. The templates' aggregated status is read from the hub with
// List every HubPollInterval while a phase waits for it (the hub's Watch
// does not carry status changes, see hubPoll): all templates aggregated
// ready, all aggregated rolled out.
//
// # Cost
//
// Per phase: every process's CPU-seconds (/proc/PID/stat) and peak RSS
// (VmHWM after writing 5 to clear_refs at the phase's start, as the
// baseline did), grouped hub, agent and members; the machine's busy share
// (/proc/stat); the hub store's writes as its revision delta (every etcd
// write transaction raises the revision by one); and the latency of the
// client's Applies and Deletes, with 50 Applies on the idle hub before
// the runs for comparison.
//
// Results.Table renders all of it as Markdown with Karmada's recorded
// figures and the ratios; Results.Plot writes per-cluster CDFs of the time
// to exist and to be ready as PNGs (gonum.org/v1/plot). TestBench runs it:
// `make bench` in full (-full), `make test` with 6 Deployments once.
//
// TestAgentFootprint (footprint_test.go, only with -footprint DIR)
// measures one agent on one member of 5 kwok nodes instead: its VmHWM and
// VmRSS per phase (idle with no works, create, update, delete of 100
// Deployments), a heap profile at each phase's end (--pprof-addr), and
// its requests to the member by verb and resource
// (tether_agent_member_requests_total) next to a direct client's writing
// the same Deployments:
//
//	go test -run TestAgentFootprint ./test/bench/ -args -footprint DIR
package bench
