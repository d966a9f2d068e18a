package ha_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// SuiteEnv selects the scenarios beyond the smoke subset, as
// TETHER_FAULTS does for the fault suite. Empty: the smoke subset (a
// replica with another CA), which runs in every `go test ./...`. "full"
// (make ha): every scenario.
const SuiteEnv = "TETHER_HA"

// tier is how much of the suite a scenario belongs to.
type tier int

const (
	smoke tier = iota // always
	full              // TETHER_HA=full (make ha)
)

func selected() tier {
	if os.Getenv(SuiteEnv) == "full" {
		return full
	}
	return smoke
}

// scenario is one HA scenario, on a fixture of its own.
type scenario struct {
	name string
	tier tier
	run  func(t *testing.T)
}

// scenarios are issue 12's tests with real parts, cheapest first.
var scenarios = []scenario{
	{name: "different-ca-refused", tier: smoke, run: differentCA},
	{name: "leader-kill9-100-applies", tier: full, run: leaderKilled(100)},
	{name: "leader-kill9-500-applies", tier: full, run: leaderKilled(500)},
	{name: "rolling-restart-under-load", tier: full, run: rollingRestart},
	{name: "leader-partitioned-from-etcd", tier: full, run: leaderPartitioned},
	{name: "lagging-replica-serves-returning-agents", tier: full, run: laggingReplica},
	{name: "store-restored-empty-replica", tier: full, run: storeRestored},
	{name: "leader-kill9-mid-eviction-grace", tier: full, run: leaderKilledMidGrace},
	{name: "rolling-upgrade-from-previous", tier: full, run: rollingUpgrade},
	{name: "leader-kill9-mid-rollout", tier: full, run: leaderKilledMidRollout},
}

// TestHA runs the scenarios SuiteEnv selects, each with its figures.
func TestHA(t *testing.T) {
	want := selected()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.tier > want {
				t.Skipf("not in the smoke subset: set %s=full (make ha)", SuiteEnv)
			}
			sc.run(t)
		})
	}
}

// scenarioTimeout bounds a scenario's work once its fixture runs.
const scenarioTimeout = 10 * time.Minute

// newLeaderBound is the longest a leader change may take after the
// leader's kill (issue 12): its lease (--leader-ttl, 10 s) and a margin.
const newLeaderBound = 15 * time.Second

// reconnectBound is the longest an agent may take to stream again after
// its replica died (issue 12).
const reconnectBound = 10 * time.Second

// killAfter is the share of the load acknowledged before the fault.
const killAfter = 3 // a third

// leaderKilled kills the leader (replica 0) with SIGKILL once a third of n
// applies are acknowledged, the applies going on through the other
// replicas, and measures the leader change and the agents' reconnects.
func leaderKilled(n int) func(*testing.T) {
	return func(t *testing.T) {
		x := newFixture(t, options{load: n})
		ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
		defer cancel()
		for k := range x.agents { // every agent on the leader: each reconnect is measured
			if err := x.agentOnReplica(ctx, k, 0); err != nil {
				t.Fatal(err)
			}
		}
		b := x.snapshot(ctx)
		l := x.startLoad(ctx, n)
		if err := l.waitAcked(ctx, int64(n/killAfter)); err != nil {
			t.Fatal(err)
		}
		victim := x.hubs[0]
		killedAt := time.Now()
		victim.Kill()
		keyAfter, actingAfter, next := x.measureLeaderChange(ctx, killedAt, 0)
		if next < 0 {
			t.FailNow() // measureLeaderChange said why
		}
		if actingAfter > newLeaderBound || actingAfter < 0 {
			t.Errorf("new leader acting %s after the kill; want within %s", fig(actingAfter), newLeaderBound)
		}
		if err := x.agentsStreaming(ctx); err != nil {
			t.Errorf("agents not all streaming again: %v", err)
		}
		if err := l.wait(ctx); err != nil {
			t.Fatal(err)
		}
		o := x.check(ctx, b, l)
		states := x.clusterStates(ctx, next)
		if strings.Count(states, ":READY") != memberCount {
			t.Errorf("clusters on the new leader after the kill: %s; want every one READY", states)
		}
		p50, p99, reconnected := x.reconnectFigures(killedAt)
		t.Logf("FIGURES %s: new_leader=hub-%d leader_key_after=%s leader_acting_after=%s agents_reconnected=%d agent_reconnect_p50=%s agent_reconnect_p99=%s writes_acked=%d writes_lost=%d writes_failed=%d apply_retries=%d uid_changes=%d member_deletes=%d cluster_states=%s",
			t.Name(), next, fig(keyAfter), fig(actingAfter), reconnected, fig(p50), fig(p99), o.acked, o.lostOnHub, o.failed, o.retries, o.uidChanges, o.deletes, states)
		if reconnected != len(x.agents) {
			t.Errorf("%d agents lost their stream; want all %d, which streamed to the killed leader", reconnected, len(x.agents))
		}
		if p99 > reconnectBound || p99 < 0 {
			t.Errorf("agent reconnect p99 %s; want within %s", fig(p99), reconnectBound)
		}
	}
}

// measureLeaderChange waits for a leader other than replica old: how long
// after since its key appeared in etcd and it reported itself leading
// (tether_hub_leader), and which replica it is. A failure to get one
// within newLeaderBound and a margin fails the test.
func (x *fixture) measureLeaderChange(ctx context.Context, since time.Time, old int) (key, acting time.Duration, next int) {
	key, acting, next = -1, -1, -1
	ctx, cancel := context.WithTimeout(ctx, 4*newLeaderBound)
	defer cancel()
	err := proc.Poll(ctx, pollFine, func(ctx context.Context) error {
		if key < 0 {
			i, _, err := x.leaderIndex(ctx)
			if err != nil {
				return err
			}
			if i < 0 || i == old {
				return fmt.Errorf("leader key: hub-%d", i)
			}
			key, next = time.Since(since), i
		}
		ok, err := x.hubs[next].Leading(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("hub-%d holds the leader key but does not report leading", next)
		}
		acting = time.Since(since)
		return nil
	})
	if err != nil {
		x.t.Errorf("no new leader: %v", err)
	}
	return key, acting, next
}

// reconnectFigures are the agents' reconnect times after since: p50, p99
// and how many agents lost their stream.
func (x *fixture) reconnectFigures(since time.Time) (p50, p99 time.Duration, n int) {
	rs, err := x.reconnects(since)
	if err != nil {
		x.t.Error(err)
	}
	var ds []time.Duration
	for c, d := range rs {
		if d < 0 {
			x.t.Errorf("agent %s lost its stream and was not welcomed again", c)
			d = time.Hour // counted, and shown as such in the percentiles
		}
		ds = append(ds, d)
	}
	return percentile(ds, 0.5), percentile(ds, 0.99), len(ds)
}
