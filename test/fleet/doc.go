// Package fleet starts a whole Tether installation on one machine: member
// clusters from the test kit (test/kit), one tether-hub process with its
// embedded etcd, and one tether-agent process per cluster, all on
// 127.0.0.1. `make demo` (test/demo) and end-to-end tests use it.
//
// # Use
//
//	f, err := fleet.Start(ctx, fleet.Options{
//		Clusters: []kit.ClusterSpec{{Name: "edge-1"}, {Name: "edge-2"}},
//		Dir:      dir,
//	})
//	defer f.Stop()
//	c, err := f.Client()              // a client.Client of the hub, as admin
//	_, err = c.Apply(ctx, manifests)  // all or nothing; a rejected object is an error
//	err = c.WaitTemplate(ctx, ref, fleet.Rolled) // aggregated status caught up
//
// Start returns once every cluster is ready, the hub answers, and every
// agent's cluster is registered on the hub with a heartbeat, so a template
// applied then is scheduled over all of them. On error (or ctx's end)
// everything already started is stopped again.
//
// # Layout of Dir
//
//	Dir/clusters/NAME/kubeconfig   the member's admin kubeconfig (and its logs)
//	Dir/hub/                       the hub's --data-dir: admin.conf, hub.addr, pki/, etcd/
//	Dir/hub.log                    the hub's output
//	Dir/agents/NAME/               state/ (the agent's --data-dir), agent.log, and
//	                               with minted certificates ca.crt, tls.crt, tls.key
//
// # Agent credentials
//
// Options.Registration chooses how agents get their identity. By default
// (RegisterAuto) the fleet asks the hub's TokenService for a one-use
// bootstrap token bound to each cluster name, as `tetherctl token create`
// does, and starts the agent with --token, --ca-hash and --cluster; a hub
// that does not serve TokenService yet (UNIMPLEMENTED) makes it fall back
// to a certificate from `tether-hub mint-agent` (--cert, --key, --ca).
// Fleet.Registration says which was used.
//
// # Processes
//
// The hub and the agents are started like the kit's processes: from one
// goroutine locked to its OS thread, each in its own process group, with a
// parent-death signal (SIGKILL), so they die with the process that started
// them however it dies. Stop ends the agents, then the hub (SIGTERM, SIGKILL
// after a grace period), then the kit's clusters, and waits for every
// process. Processes lists them all with their role, for `.demo/pids` and
// for tests that check none survives.
//
// # Faults
//
// Fault tests (test/faults) run the hub and the agents in network
// namespaces: Options.Wrap prefixes their command lines (ip netns exec NS)
// and Options.AgentKubeconfig gives each agent a kubeconfig it can reach
// its member with from there. Signal (SIGSTOP, SIGCONT), Kill (SIGKILL)
// and Restart (the same command line again, the log appended to) act on
// the hub or one agent; RestartWith adds flags to the command line.
//
// # Binaries
//
// tether-hub and tether-agent are taken from Options.BinDir, else
// $TETHER_BIN, else <repo>/bin (`make build`); the kit's binaries as the kit
// finds them (`make kit-bins`). A missing binary is an error that says which
// target builds it. TestBinaries gives a test package's TestMain the
// commands it runs: $TETHER_BIN (which `make test` sets to `make build`'s
// bin/), else built from this tree into a temporary directory.
//
// It imports test/kit, test/proc, client, internal/clientconfig,
// internal/leakcheck and the generated hub API, never hub/ or agent/: it
// starts the hub and agents as processes.
package fleet
