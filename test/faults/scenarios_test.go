package faults_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// SuiteEnv selects the scenarios beyond the smoke subset. Empty: only the
// smoke subset (about two minutes with TestHubNeverDialsOut; it runs in
// every `go test ./...`, so in `make test`). "full" (CI's make faults):
// also the other scenarios of a minute or so.
// "all" (make faults): every scenario, the long ones included (10 min
// partition, 15 min hub pause, flapping, restore from a snapshot).
const SuiteEnv = "TETHER_FAULTS"

// tier is how much of the suite a scenario belongs to.
type tier int

const (
	smoke tier = iota // always
	full              // TETHER_FAULTS=full or all
	long              // TETHER_FAULTS=all (make faults)
)

// selected returns the highest tier SuiteEnv asks for.
func selected() tier {
	switch os.Getenv(SuiteEnv) {
	case "all":
		return long
	case "full":
		return full
	}
	return smoke
}

// shortGrace is the agents' --eviction-grace in the scenarios where the
// hub loses its store: an agent deletes the works no hub claims after it,
// so a short one shows within the scenario what the default (1 h) would do
// an hour later.
var shortGrace = []string{"--eviction-grace", "30s"}

// scenario is one fault, run on a fixture of its own.
type scenario struct {
	name string
	tier tier
	s    setup
	run  func(t *testing.T, x *fixture)
}

// scenarios are the fault suite.
var scenarios = []scenario{
	{name: "partition-one-60s", tier: full, run: partitionOne(60 * time.Second)},
	{name: "hub-paused-70s", tier: full, run: hubPaused(70 * time.Second)},
	{name: "malformed-status", tier: smoke, run: malformedStatus},
	{name: "agent-paused-80s", tier: full, run: agentPaused(80 * time.Second)},
	{name: "partition-all-60s", tier: full, run: partitionAll(60 * time.Second)},
	{name: "hub-kill9-during-applies", tier: full, run: hubKilledDuringApplies},
	{name: "agent-kill9-during-delete", tier: full, run: agentKilledDuringDelete},
	{name: "apiserver-stopped-60s", tier: full, run: apiServerStopped(60 * time.Second)},
	{name: "policy-deleted-recreated", tier: full, run: policyRecreated},
	{name: "binding-undecodable", tier: full, run: bindingUndecodable},
	{name: "store-wiped-ca-kept", tier: full, s: setup{agentArgs: shortGrace}, run: storeWiped},
	{name: "over-max-works", tier: full, s: setup{hubArgs: []string{"--max-works-per-cluster", strconv.Itoa(worksLimit)}}, run: overMaxWorks},
	{name: "status-flood-512Mi", tier: full, s: floodSetup, run: statusFlood},
	{name: "render-panics-restart", tier: full, s: setup{hubTags: renderFaultTag}, run: renderPanics},
	{name: "apply-panics-restart", tier: full, s: setup{hubTags: renderFaultTag}, run: applyPanics},
	{name: "works-limit-lowered", tier: full, run: worksLimitLowered},
	{name: "rollout-partitioned-cluster", tier: full, run: rolloutPartitioned},
	{name: "flapping-60s", tier: long, run: flapping(60*time.Second, time.Second)},
	{name: "partition-one-10m", tier: long, run: partitionOne(10 * time.Minute)},
	{name: "hub-paused-15m", tier: long, run: hubPaused(15 * time.Minute)},
	{name: "store-restored-snapshot", tier: long, s: setup{agentArgs: shortGrace}, run: storeRestored},
	{name: "data-dir-restored", tier: full, s: setup{agentArgs: shortGrace}, run: dataDirRestored},
	{name: "identity-deleted", tier: full, s: setup{agentArgs: shortGrace}, run: identityDeleted},
}

// TestFaults runs the scenarios SuiteEnv selects, each with its figures.
func TestFaults(t *testing.T) {
	requireNet(t)
	want := selected()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.tier > want {
				t.Skipf("not in the selected subset: set %s=full or all (make faults)", SuiteEnv)
			}
			x := newFixture(t, sc.s)
			sc.run(t, x)
		})
	}
}

// partitionOne cuts edge-1 off the hub for d, then heals the link.
func partitionOne(d time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		r := x.begin(t.Name())
		if err := x.net.Partition("edge-1"); err != nil {
			t.Fatal(err)
		}
		r.hold(d)
		if err := x.net.Heal("edge-1"); err != nil {
			t.Fatal(err)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}

// partitionAll cuts every agent off the hub at once for d (a hub-side
// outage), then heals every link.
func partitionAll(d time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		r := x.begin(t.Name())
		if err := x.net.PartitionAll(); err != nil {
			t.Fatal(err)
		}
		r.hold(d)
		if err := x.net.HealAll(); err != nil {
			t.Fatal(err)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}

// flapping cuts edge-1's link for every other period during d.
func flapping(d, period time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		r := x.begin(t.Name())
		for end := time.Now().Add(d); time.Now().Before(end); {
			if err := x.net.Partition("edge-1"); err != nil {
				t.Fatal(err)
			}
			r.hold(period)
			if err := x.net.Heal("edge-1"); err != nil {
				t.Fatal(err)
			}
			r.hold(period)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}

// apiServerStopped kills edge-1's kube-apiserver for d, then starts it
// again on the same address (its objects are in etcd).
func apiServerStopped(d time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		c := x.fleet.Kit.Cluster("edge-1")
		r := x.begin(t.Name())
		c.StopAPIServer()
		r.hold(d)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}
