package liveness

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// TestOwnStreamsRenewLeases: a hub starved of CPU takes longer than a
// lease to commit its heartbeat records and read them back (a fleet of
// 10,000 agents given 100 works each lost 9,087 leases at once that way,
// the Publisher's flush taking 71 s; after a restart, 7,213 clusters had
// no lease 85 s on). The heartbeats its own streams receive renew their
// leases in its own Leases at once, with their content; nothing is
// flushed here (the Publisher's Run does not run), as if every write took
// for ever.
func TestOwnStreamsRenewLeases(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	leases := New(Config{Clock: clock, PauseThreshold: -1})
	p := NewPublisher(st, PublisherConfig{Replica: "r", Clock: clock, Local: leases})

	p.Heartbeat("live", hbReady)
	leases.Heartbeat("gone", hbReady) // a record of another replica's
	for range 9 {                     // 90 s of heartbeats on the stream, none read back
		clock.Advance(10 * time.Second)
		p.Heartbeat("live", hbReady)
		leases.expire()
	}
	if got, _ := leases.Get("live"); got.State != StateReady || !got.LastHeartbeat.Equal(clock.Now()) {
		t.Errorf("lease of a cluster heartbeating on this replica's stream, after 90 s of records not read back: %s, last heartbeat %s ago; want Ready, renewed now",
			got.State, clock.Now().Sub(got.LastHeartbeat))
	}
	if got, _ := leases.Get("gone"); got.State != StateUnknown {
		t.Errorf("lease of a cluster that sent nothing for 90 s = %s; want Unknown", got.State)
	}

	p.Heartbeat("gone", hbReady)    // back on a stream
	p.Heartbeat("live", hbNotReady) // a state change
	for cluster, want := range map[string]State{"gone": StateReady, "live": StateNotReady} {
		if got, _ := leases.Get(cluster); got.State != want {
			t.Errorf("lease of %s right after a heartbeat on this replica's stream = %s; want %s", cluster, got.State, want)
		}
	}
}

// TestFollowSkipsOwnRecords: the records of the replica whose streams
// renew the leases directly were applied already; read back later they
// would put older content over newer (a state flapping back), so Follow
// skips them, and applies other replicas' records as before. A listed
// record older than the heartbeat a lease holds changes nothing either.
func TestFollowSkipsOwnRecords(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	leases := New(Config{Clock: clock, PauseThreshold: -1})
	p := NewPublisher(st, PublisherConfig{Replica: "r", Clock: clock, Local: leases})
	f := &follower{l: leases, log: hclog.NewNullLogger(), contents: map[string]followed{}}

	p.Heartbeat("c1", hbNotReady) // what its stream said last
	for _, ev := range heartbeatEvents(t, "c1", hbReady, clock.Now()) {
		f.apply(ev, false) // this replica's record of an earlier heartbeat, read back late
	}
	if got, _ := leases.Get("c1"); got.State != StateNotReady {
		t.Errorf("lease after this replica's own older record came back = %s; want NotReady, as its stream said last", got.State)
	}
	clock.Advance(time.Second)
	for _, ev := range recordEvents(t, "s", "c1", hbReady, clock.Now()) {
		f.apply(ev, false) // the cluster moved to replica s
	}
	if got, _ := leases.Get("c1"); got.State != StateReady || !got.LastHeartbeat.Equal(clock.Now()) {
		t.Errorf("lease after replica s's record = %s, last heartbeat %s ago; want Ready, now", got.State, clock.Now().Sub(got.LastHeartbeat))
	}
	for _, ev := range heartbeatEvents(t, "c1", hbNotReady, clock.Now().Add(-time.Second)) {
		f.apply(ev, true) // listed: received before the heartbeat the lease holds
	}
	if got, _ := leases.Get("c1"); got.State != StateReady {
		t.Errorf("lease after a listed record older than its last heartbeat = %s; want Ready, unchanged", got.State)
	}
}

// recordEvents returns the events of replica writing hb received at.
func recordEvents(t *testing.T, replica, cluster string, hb *agentv1.Heartbeat, at time.Time) []store.Event {
	t.Helper()
	enc, err := encodeHeartbeat(hb)
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeBeat(replica, at, enc.digest)
	if err != nil {
		t.Fatal(err)
	}
	return []store.Event{
		{Type: store.EventPut, KV: store.KV{Key: store.HeartbeatKey(cluster), Value: enc.content}},
		{Type: store.EventPut, KV: store.KV{Key: store.LivenessKey(cluster), Value: b}},
	}
}
