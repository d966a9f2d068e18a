package liveness

import (
	"testing"
	"time"

	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// TestOwnStreamsKeepLeases: a hub starved of CPU takes longer than a lease
// to commit its heartbeat records and read them back (a fleet of 10,000
// agents given 100 works each lost 9,087 leases at once that way, the
// Publisher's flush taking 71 s). The heartbeats its own streams receive
// keep their leases valid in its own Leases meanwhile; they change neither
// state nor content, and bring back no lease that ran out: those come only
// with the records. Nothing is flushed here: the Publisher's Run does not
// run, as if every write took forever.
func TestOwnStreamsKeepLeases(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	leases := New(Config{Clock: clock, PauseThreshold: -1})
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: clock, Local: leases})

	leases.Heartbeat("live", hbReady) // as Follow delivers the first records
	leases.Heartbeat("gone", hbReady)
	for range 9 { // 90 s of heartbeats on the stream, none read back
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

	_, rev := leases.List()
	p.Heartbeat("gone", hbReady)    // back on a stream: it comes back with its record
	p.Heartbeat("live", hbNotReady) // a state change: it comes with its record
	p.Heartbeat("new", hbReady)     // not met yet: its record makes it
	if got, _ := leases.Get("gone"); got.State != StateUnknown {
		t.Errorf("a heartbeat on the stream brought back a lease that ran out (%s) before its record was read back", got.State)
	}
	if got, _ := leases.Get("live"); got.State != StateReady {
		t.Errorf("a heartbeat on the stream changed the state to %s before its record was read back; want Ready", got.State)
	}
	if _, ok := leases.Get("new"); ok {
		t.Error("a heartbeat on the stream made a lease before its record was read back")
	}
	if _, now := leases.List(); now != rev {
		t.Errorf("heartbeats on this replica's streams moved the leases' revision %d -> %d; only records do", rev, now)
	}
}
