package ha_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"

	"github.com/tetherproj/tether/test/proc"
)

// leaderTTL is the replicas' --leader-ttl (the hub's default): a leader
// cut off from etcd stops leading within it.
const leaderTTL = 10 * time.Second

// stepDownMargin is added to leaderTTL for the step-down's deadline: the
// etcd client's keep-alive notices the lost lease after its TTL, then the
// controllers return.
const stepDownMargin = 5 * time.Second

// partitionLoad is how many applies go through the host's replicas while
// the leader is cut off: the new leader turns them into decisions.
const partitionLoad = 10

// healHold is how long the suite watches the healed replica not taking
// leadership back (it campaigns again, behind the new leader).
const healHold = 5 * time.Second

// leaderOnly are the prefixes only the leader writes (bindings: detector,
// scheduler, aggregator; clusters: registration), through the fenced
// store.
var leaderOnly = []string{"/tether/bindings/", "/tether/clusters/"}

// markerKey is written by the suite to mark the end of the history it
// reads back; it is outside the hub's /tether/.
const markerKey = "/tether-ha/marker"

// leaderPartitioned cuts the leader (replica 0, in a network namespace,
// with an agent streaming to it) off etcd with iptables: it must stop
// leading within its lease, a replica on the host must take over, the
// applies made meanwhile must reach every member (the cut replica's agent
// too) within cutServedBound, every write of a leader's after the cut
// must be under the new leader's key, and once healed the old leader must
// not lead again while the new one does.
func leaderPartitioned(t *testing.T) {
	x := newFixture(t, options{netns: true, load: partitionLoad})
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	if err := x.agentOnReplica(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	b := x.snapshot(ctx)
	old := x.hubs[0]
	if i, _, err := x.leaderIndex(ctx); err != nil || i != 0 {
		t.Fatalf("leader before the cut: hub-%d (%v); want hub-0", i, err)
	}
	oldKey := x.leaderKey(ctx)
	cutRev := x.revision(ctx)
	cutAt := time.Now()
	heal := x.cutFromEtcd()
	// The new leader is timed while the step-down is: a scrape of the cut
	// replica takes seconds.
	type change struct {
		key, acting time.Duration
		next        int
	}
	changed := make(chan change, 1)
	go func() {
		var c change
		c.key, c.acting, c.next = x.measureLeaderChange(ctx, cutAt, 0)
		changed <- c
	}()
	stepDown := x.measureStepDown(ctx, cutAt)
	c := <-changed
	keyAfter, actingAfter, next := c.key, c.acting, c.next
	if next < 0 {
		t.FailNow() // measureLeaderChange said why
	}
	l := x.startLoad(ctx, partitionLoad)
	if err := l.wait(ctx); err != nil {
		t.Fatal(err)
	}
	servedAt := time.Now()
	served := time.Duration(-1)
	if err := x.waitInMembers(ctx, l.ackedNames(), cutServedBound); err != nil {
		t.Errorf("applies made while hub-0 was cut off etcd did not reach every member within %s: %v; "+
			"an agent streaming to a replica cut off etcd gets no new works (and its heartbeats reach no other replica) "+
			"unless it moves to another replica", cutServedBound, err)
	} else {
		served = time.Since(servedAt)
	}
	onCut, err := x.hubs[0].Metric(ctx, "tether_hub_agent_streams")
	if err != nil {
		t.Error(err)
	}
	states := x.clusterStates(ctx, next)
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	partitioned := time.Since(cutAt)
	x.holdFollower(ctx, old, next)
	writes, byOld := x.leaderWritesSince(ctx, cutRev, oldKey)
	o := x.check(ctx, b, l)
	t.Logf("FIGURES %s: step_down_after=%s new_leader=hub-%d leader_key_after=%s leader_acting_after=%s partitioned_for=%s leader_writes_after_cut=%d writes_under_old_leadership=%d cut_applies_in_members_after=%s agents_on_cut_replica_at_heal=%s cluster_states_at_heal=%s writes_acked=%d writes_lost=%d uid_changes=%d member_deletes=%d",
		t.Name(), fig(stepDown), next, fig(keyAfter), fig(actingAfter), fig(partitioned), writes, byOld, fig(served), onCut, states, o.acked, o.lostOnHub, o.uidChanges, o.deletes)
	if err := old.Exited(); err != nil {
		t.Errorf("the partitioned replica exited: %v", err)
	}
}

// msgLostLeadership is hub/leader's message when a term ends before the
// replica stops.
const msgLostLeadership = "lost leadership; campaigning again"

// measureStepDown waits until replica 0 no longer reports leading, then
// returns how long after since its log said it lost leadership (a scrape
// of a replica cut off etcd takes seconds: the log is the finer clock);
// past leaderTTL and stepDownMargin it fails the test.
func (x *fixture) measureStepDown(ctx context.Context, since time.Time) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, leaderTTL+stepDownMargin+metricsScrape)
	defer cancel()
	err := proc.Poll(ctx, pollFine, func(ctx context.Context) error {
		ok, err := x.hubs[0].Leading(ctx)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("hub-0 still leads")
		}
		return nil
	})
	if err != nil {
		x.t.Errorf("the partitioned leader did not stop leading within its lease (%s) and %s: %v", leaderTTL, stepDownMargin, err)
		return -1
	}
	at, found, err := firstLogAt(x.hubs[0].LogPath, msgLostLeadership, since)
	if err != nil || !found {
		x.t.Errorf("the partitioned leader reports not leading, but its log does not say it lost leadership (%v)", err)
		return -1
	}
	d := at.Sub(since)
	if d > leaderTTL+stepDownMargin {
		x.t.Errorf("the partitioned leader lost leadership %s after the cut; want within its lease (%s) and %s", fig(d), leaderTTL, stepDownMargin)
	}
	return d
}

// metricsScrape is how long a scrape of a replica cut off etcd may take
// (the hub's 2 s bound on its store query, and a margin).
const metricsScrape = 5 * time.Second

// holdFollower watches for healHold that old does not lead and that etcd's
// leader stays replica next.
func (x *fixture) holdFollower(ctx context.Context, old interface {
	Leading(context.Context) (bool, error)
}, next int) {
	end := time.Now().Add(healHold)
	for time.Now().Before(end) {
		if ok, err := old.Leading(ctx); err != nil {
			x.t.Errorf("healed replica's metrics: %v", err)
			return
		} else if ok {
			x.t.Errorf("the healed replica leads again while hub-%d should", next)
			return
		}
		if i, _, err := x.leaderIndex(ctx); err != nil || i != next {
			x.t.Errorf("leader after the heal: hub-%d (%v); want hub-%d", i, err, next)
			return
		}
		time.Sleep(pollFine * 4) // the watch itself, not a condition
	}
}

// clusterStates are the clusters' states as replica i reports them,
// "name:STATE,…".
func (x *fixture) clusterStates(ctx context.Context, i int) string {
	resp, err := x.clients[i].Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{})
	if err != nil {
		x.t.Error(err)
		return "unknown"
	}
	var parts []string
	for _, c := range resp.GetClusters() {
		parts = append(parts, c.GetName()+":"+strings.TrimPrefix(c.GetState().String(), "CLUSTER_STATE_"))
	}
	return strings.Join(parts, ",")
}

// revision is etcd's current revision.
func (x *fixture) revision(ctx context.Context) int64 {
	resp, err := x.ec.Get(ctx, markerKey)
	if err != nil {
		x.t.Fatal(err)
	}
	return resp.Header.Revision
}

// leaderWritesSince reads etcd's history after revision rev up to now and
// counts the writes under leaderOnly, and those of them made while
// oldKey, the cut replica's leadership, was still the leader's key (before
// its deletion, when its lease ran out).
func (x *fixture) leaderWritesSince(ctx context.Context, rev int64, oldKey string) (writes, byOld int) {
	t := x.t
	put, err := x.ec.Put(ctx, markerKey, time.Now().String())
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var deleted int64 // revision of oldKey's deletion
	wch := x.ec.Watch(wctx, "/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for resp := range wch {
		if err := resp.Err(); err != nil {
			t.Fatalf("read etcd's history since the cut (revision %d): %v", rev, err)
		}
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key)
			switch {
			case ev.Kv.ModRevision >= put.Header.Revision:
				if deleted == 0 {
					t.Errorf("the cut replica's leader key %s was never deleted", oldKey)
				}
				return writes, byOld
			case key == oldKey && ev.Type == clientv3.EventTypeDelete:
				deleted = ev.Kv.ModRevision
			case hasAnyPrefix(key, leaderOnly):
				writes++
				if deleted == 0 {
					byOld++
					t.Errorf("%s written at revision %d, after the cut and while the cut replica's key %s led", key, ev.Kv.ModRevision, oldKey)
				}
			}
		}
	}
	t.Fatalf("etcd's history since the cut ended before the marker: %v", wctx.Err())
	return writes, byOld
}

// leaderKey is the leader's key under /tether/leader/.
func (x *fixture) leaderKey(ctx context.Context) string {
	resp, err := x.ec.Get(ctx, leaderPrefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil || len(resp.Kvs) == 0 {
		x.t.Fatalf("no leader key (%v)", err)
	}
	return string(resp.Kvs[0].Key)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// cutServedBound is how long the applies made during the cut may take to
// reach every member: under a cluster lease (the hub's default 40 s), so
// that an agent that has to leave the cut replica does so before its
// cluster would turn Unknown.
const cutServedBound = 30 * time.Second

// waitInMembers waits until every member holds the ConfigMaps names, at
// most d.
func (x *fixture) waitInMembers(ctx context.Context, names []string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var lacking error // the last members' answer, which the deadline may interrupt
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		missing, err := x.missingInMembers(ctx, names)
		if err != nil {
			return err
		}
		for c, m := range missing {
			lacking = fmt.Errorf("%s lacks %v", c, m)
			return lacking
		}
		return nil
	})
	if err != nil && lacking != nil && !strings.Contains(err.Error(), lacking.Error()) {
		return fmt.Errorf("%w; last: %v", err, lacking)
	}
	return err
}

// cutFromEtcd cuts replica 0 (in its namespace) off etcd and returns the
// func that heals it, once; the test's end heals it if the test did not.
func (x *fixture) cutFromEtcd() func() error {
	if err := x.ns.CutFrom(x.etcd.Ports); err != nil {
		x.t.Fatal(err)
	}
	var once sync.Once
	var err error
	heal := func() error {
		once.Do(func() { err = x.ns.Heal(x.etcd.Ports) })
		return err
	}
	x.t.Cleanup(func() { _ = heal() })
	return heal
}
