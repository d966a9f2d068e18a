package ha_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// rollingLoad bounds the applies of a rolling restart: the load runs
// until the last replica is back (about 40 ms an apply, so some 40 s
// at most), then stops.
const rollingLoad = 1000

// rollingRestart restarts every replica in turn (SIGTERM, then the same
// binary) while applies go on.
func rollingRestart(t *testing.T) {
	x := newFixture(t, options{load: rollingLoad})
	x.roll(t, x.hubBin)
}

// rollingUpgrade starts the replicas and the agents from the previous
// release (whose agents take one hub address each, and whose replicas do
// not relay statuses to the leader), then replaces each replica in turn by this tree's hub while
// applies go on: replicas of two adjacent versions side by side (issue 12
// point 7).
func rollingUpgrade(t *testing.T) {
	prev := previousBinaries(t)
	x := newFixture(t, options{load: rollingLoad, singleHub: true, noRelay: true,
		hubBin: filepath.Join(prev, "tether-hub"), agentBin: filepath.Join(prev, "tether-agent")})
	x.roll(t, filepath.Join(binDir, "tether-hub"))
}

// roll restarts each replica from bin under load, waiting for it to serve,
// for a leader and for every agent's stream before the next, then checks
// that nothing changed in the members but the applies.
func (x *fixture) roll(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	b := x.snapshot(ctx)
	l := x.startLoad(ctx, rollingLoad)
	defer l.stop()
	if err := l.waitAcked(ctx, 20); err != nil {
		t.Fatal(err)
	}
	var slowest time.Duration
	changes := 0
	for _, r := range x.hubs {
		before, _, err := x.leaderIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		r.Terminate()
		if err := r.Start(bin); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitServing(ctx); err != nil {
			t.Fatal(err)
		}
		after, err := x.waitAnyLeader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after != before {
			changes++
		}
		if err := x.agentsStreaming(ctx); err != nil {
			t.Fatalf("after restarting hub-%d: %v", r.Index, err)
		}
		slowest = max(slowest, time.Since(begin))
	}
	l.stop()
	if err := l.wait(ctx); err != nil {
		t.Fatal(err)
	}
	o := x.check(ctx, b, l)
	t.Logf("FIGURES %s: replicas_restarted=%d leader_changes=%d slowest_restart_to_streams=%s writes_acked=%d writes_lost=%d writes_failed=%d apply_retries=%d uid_changes=%d member_deletes=%d",
		t.Name(), len(x.hubs), changes, fig(slowest), o.acked, o.lostOnHub, o.failed, o.retries, o.uidChanges, o.deletes)
	if o.failed > 0 {
		t.Errorf("%d applies acknowledged by no replica within %s", o.failed, applyGiveUp)
	}
	for _, r := range x.hubs {
		if r.Bin() != bin {
			t.Errorf("hub-%d runs %s; want %s", r.Index, r.Bin(), bin)
		}
	}
}

// waitAnyLeader waits until a replica holds the leader key and reports
// itself leading, and returns it.
func (x *fixture) waitAnyLeader(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*newLeaderBound)
	defer cancel()
	leader := -1
	err := proc.Poll(ctx, pollFine, func(ctx context.Context) error {
		i, _, err := x.leaderIndex(ctx)
		if err != nil || i < 0 {
			return fmt.Errorf("no leader key (%v)", err)
		}
		ok, err := x.hubs[i].Leading(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("hub-%d holds the leader key but does not report leading", i)
		}
		leader = i
		return nil
	})
	if err != nil {
		return -1, fmt.Errorf("no leader: %w", err)
	}
	return leader, nil
}
