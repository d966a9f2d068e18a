package ha_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

const (
	// lagLoad is how many ConfigMaps are applied while replica 0 is cut off.
	lagLoad = 20
	// lagHold is how long the suite watches the members once the agents
	// are back on the replica that lagged.
	lagHold = 20 * time.Second
	// lagBehind is how long replica 0 is held behind its store once the
	// other replicas are stopped: its agents come back to it meanwhile.
	lagBehind = 25 * time.Second
	// holdFileEnv is hub/render.HoldFileEnv: in a hub built with -tags
	// renderfault, the renderer applies no store change while the file it
	// names exists.
	holdFileEnv = "TETHER_RENDER_HOLD_FILE"
	// distrustLine is what an agent logs when it holds its hub not
	// authoritative for itself (agent/hubclient): a hub behind what it saw.
	distrustLine = "NOT AUTHORITATIVE"
)

// laggingReplica: replica 0 (in a network namespace, every agent streaming
// to it) is cut off etcd; its agents move to the other replicas and get the
// ConfigMaps applied meanwhile. Then every replica's renderer is held (the
// renderfault hook), replica 0 is healed and the other replicas are
// stopped: every agent comes back to replica 0 while it certainly lags its
// store, for lagBehind, before the hold ends. It must not serve them an
// older view than they hold: every acknowledged ConfigMap stays in every
// member, no UID changes, no agent deletes anything, and no agent finds
// its hub behind what it saw (which would hold the hub not authoritative
// until an operator adopts the fleet). Without the wait for the agent's
// revision, the agents get the view from before the cut at once.
func laggingReplica(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	t.Setenv(holdFileEnv, hold) // every replica inherits it
	x := newFixture(t, options{netns: true, load: lagLoad, hubBin: fleet.HubWithTags(t, "renderfault")})
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
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	healAt := time.Now()
	x.hubs[1].Kill()
	x.hubs[2].Kill()
	time.Sleep(lagBehind) // the agents come back to replica 0 while it lags
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
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
	distrusted := x.agentsLogging(distrustLine)
	if len(distrusted) > 0 {
		t.Errorf("agents %v found replica 0 behind the store revision they had seen: it served them before it caught up", distrusted)
	}
	t.Logf("FIGURES %s: partitioned_for=%s held_behind=%s agents_back_on_lagging_replica_after=%s writes_acked=%d writes_lost=%d uid_changes=%d member_deletes=%d agents_distrusting=%d",
		t.Name(), fig(healAt.Sub(cutAt)), fig(lagBehind), fig(back), o.acked, o.lostOnHub, o.uidChanges, o.deletes, len(distrusted))
}

// agentsLogging returns the clusters whose agent's log (every process it
// ran) holds s.
func (x *fixture) agentsLogging(s string) []string {
	var out []string
	for _, a := range x.agents {
		data, err := os.ReadFile(a.log)
		if err != nil {
			x.t.Errorf("read agent %s's log: %v", a.cluster, err)
			continue
		}
		if strings.Contains(string(data), s) {
			out = append(out, a.cluster)
		}
	}
	return out
}
