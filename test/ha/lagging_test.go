package ha_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// lagLoad is how many ConfigMaps are applied while replica 0 is cut off.
const lagLoad = 20

// lagHold is how long the suite watches the members once the agents are
// back on the replica that lagged.
const lagHold = 20 * time.Second

// laggingReplica: replica 0 (in a network namespace, every agent streaming
// to it) is cut off etcd; its agents move to the other replicas and get the
// ConfigMaps applied meanwhile. Replica 0 is healed and, at once, the
// other replicas are stopped, so every agent comes back to replica 0 while
// it may still lag its store. It must not serve them an older view than
// they hold: every acknowledged ConfigMap stays in every member, no UID
// changes, and no agent deletes anything.
func laggingReplica(t *testing.T) {
	x := newFixture(t, options{netns: true, load: lagLoad})
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	for k := range x.agents {
		if err := x.agentOnReplica(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	b := x.snapshot(ctx)
	cutAt := time.Now()
	heal := x.cutFromEtcd()
	l := x.startLoad(ctx, lagLoad)
	if err := l.wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := x.waitInMembers(ctx, l.ackedNames(), cutServedBound); err != nil {
		t.Fatalf("applies made while hub-0 was cut off did not reach the members through the other replicas: %v", err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	healAt := time.Now()
	x.hubs[1].Kill()
	x.hubs[2].Kill()
	err := proc.Poll(ctx, pollFine, func(context.Context) error {
		for _, a := range x.agents {
			if addr, err := a.streamAddr(); err != nil || addr != x.hubs[0].Listen {
				return fmt.Errorf("agent %s streams to %q (%v); want hub-0 (%s)", a.cluster, addr, err, x.hubs[0].Listen)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	back := time.Since(healAt)
	time.Sleep(lagHold) // watching the members, not waiting for a condition
	o := x.check(ctx, b, l)
	t.Logf("FIGURES %s: partitioned_for=%s agents_back_on_lagging_replica_after=%s writes_acked=%d writes_lost=%d uid_changes=%d member_deletes=%d",
		t.Name(), fig(healAt.Sub(cutAt)), fig(back), o.acked, o.lostOnHub, o.uidChanges, o.deletes)
}
