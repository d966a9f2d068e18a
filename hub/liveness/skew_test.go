package liveness

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/liveness/livenesstest"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/protocol"
)

// TestListedRecordsIgnorePublisherClocks: two replicas whose clocks
// disagree with the follower's by an hour, one ahead and one behind,
// publish renewals that the follower finds by listing (at start, and
// after its watch was lost). A renewal renews a lease from when the
// follower first saw that revision of the record, by its own clock: the
// ahead replica's renewal of a cluster gone quiet does not renew it as if
// fresh 50 s later, and the behind replica's new renewal is not taken for
// an hour-old one.
func TestListedRecordsIgnorePublisherClocks(t *testing.T) {
	st := etcdtest.Embedded(t)
	ctx, flush := grant(t, st)
	clock := newFakeClock()
	aheadClock := livenesstest.NewClock(t0.Add(time.Hour))
	behindClock := livenesstest.NewClock(t0.Add(-time.Hour))
	ahead := NewPublisher(st, PublisherConfig{Replica: "ahead", Clock: aheadClock})
	behind := NewPublisher(st, PublisherConfig{Replica: "behind", Clock: behindClock})
	l := New(Config{Clock: clock, PauseThreshold: -1})
	f := &follower{l: l, log: hclog.NewNullLogger()}
	relist := func() {
		t.Helper()
		if _, err := f.list(ctx, st); err != nil {
			t.Fatalf("list liveness records: %v", err)
		}
	}
	write := func(p *Publisher, cluster string) {
		t.Helper()
		p.Heartbeat(cluster, hbReady)
		if err := flush(ctx, p); err != nil {
			t.Fatalf("flush %s: %v", cluster, err)
		}
	}

	write(ahead, "quiet")
	write(behind, "busy")
	relist()
	for _, c := range []string{"quiet", "busy"} {
		if got, ok := l.Get(c); !ok || got.State != StateReady || !got.LastHeartbeat.Equal(clock.Now()) {
			t.Errorf("lease of %s after listing its new renewal: found %v, %s, last heartbeat %s; want Ready, renewed now (%s)",
				c, ok, got.State, got.LastHeartbeat, clock.Now())
		}
	}

	for _, c := range []*livenesstest.Clock{clock, aheadClock, behindClock} {
		c.Advance(50 * time.Second)
	}
	l.expire()
	write(behind, "busy") // "quiet" sends nothing more: its renewal stays as it was
	relist()              // the watch was lost meanwhile
	if got, _ := l.Get("quiet"); got.State != StateUnknown {
		t.Errorf("lease of quiet after listing the renewal first seen 50 s ago = %s, last heartbeat %s ago; want Unknown",
			got.State, clock.Now().Sub(got.LastHeartbeat))
	}
	if got, _ := l.Get("busy"); got.State != StateReady || !got.LastHeartbeat.Equal(clock.Now()) {
		t.Errorf("lease of busy after listing a renewal written since the last list = %s, last heartbeat %s ago; want Ready, renewed now",
			got.State, clock.Now().Sub(got.LastHeartbeat))
	}
}

// TestQuietClustersRecordsSwept: a replica deletes the records of a
// cluster it has written no renewal for in a lease duration, by its own
// clock, so that no replica listing them later takes them for fresh; a
// cluster it hears from keeps its records, and so does one whose records
// another replica has written since.
func TestQuietClustersRecordsSwept(t *testing.T) {
	st := etcdtest.Embedded(t)
	ctx, flushOther := grant(t, st)
	clock := newFakeClock()
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: clock})
	other := NewPublisher(st, PublisherConfig{Replica: "b", Clock: clock})
	lease, err := st.Client().Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	quiet := []string{"quiet"}
	for i := range 2 * maxBatch { // more than one transaction of deletes
		quiet = append(quiet, fmt.Sprintf("quiet-%d", i))
	}
	for _, c := range append([]string{"busy", "moved"}, quiet...) {
		p.Heartbeat(c, hbReady)
	}
	if err := p.flush(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(protocol.LeaseDuration - time.Second)
	p.Heartbeat("busy", hbReady)
	other.Heartbeat("moved", hbReady)
	if err := p.flush(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	if err := flushOther(ctx, other); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := p.sweep(ctx, lease.ID); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	want := map[string]bool{"busy": true, "moved": true}
	for _, c := range quiet {
		want[c] = false
	}
	for c, want := range want {
		for _, key := range []string{store.LivenessKey(c), store.HeartbeatKey(c)} {
			_, err := st.Get(ctx, key)
			if found := err == nil; found != want {
				t.Errorf("%s a lease after its replica last wrote it: found %v (%v); want %v", key, found, err, want)
			}
		}
	}
}
