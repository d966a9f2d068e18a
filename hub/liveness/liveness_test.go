package liveness

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/protocol"
)

// pollTimeout bounds every poll of these tests.
const pollTimeout = 30 * time.Second

// runAll runs tasks until the returned stop is called; stop waits for them.
func runAll(t *testing.T, tasks ...func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := task(ctx); err != nil {
				t.Errorf("task: %v", err)
			}
		}()
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

func pollState(t *testing.T, l *Leases, cluster string, want State) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for time.Now().Before(deadline) {
		if got, ok := l.Get(cluster); ok && got.State == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, _ := l.Get(cluster)
	t.Fatalf("lease of %s = %s after %s; want %s", cluster, got.State, pollTimeout, want)
}

// TestLivenessAcrossReplicas: heartbeats received by two replicas reach a
// third replica's leases through etcd; unchanged heartbeats are not written
// again before the refresh; a replica stopping removes its records without
// changing any lease.
func TestLivenessAcrossReplicas(t *testing.T) {
	st := etcdtest.Embedded(t)
	a := NewPublisher(st, PublisherConfig{Replica: "a", Refresh: time.Hour})
	b := NewPublisher(st, PublisherConfig{Replica: "b", Refresh: time.Hour})
	view := New(Config{})
	stopA := runAll(t, a.Run)
	runAll(t, b.Run, view.Run, func(ctx context.Context) error { return Follow(ctx, st, view, hclog.NewNullLogger()) })

	a.Heartbeat("c1", hbReady)
	b.Heartbeat("c2", hbNotReady)
	pollState(t, view, "c1", StateReady)
	pollState(t, view, "c2", StateNotReady)

	for range 50 {
		a.Heartbeat("c1", hbReady) // renewals only: nothing due before the refresh
	}
	a.Heartbeat("c1", hbNotReady) // a state change: written at once
	pollState(t, view, "c1", StateNotReady)
	if _, puts := a.Counts(); puts != 2 {
		t.Errorf("replica a wrote %d records for 52 heartbeats of one cluster; want 2 (its two states)", puts)
	}

	stopA() // revokes a's lease: its record goes
	deadline := time.Now().Add(pollTimeout)
	for {
		_, err := st.Get(context.Background(), store.LivenessKey("c1"))
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("record of c1 still there %s after its replica stopped: %v", pollTimeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, _ := view.Get("c1"); got.State != StateNotReady {
		t.Errorf("lease of c1 after its record went = %s; want NotReady until the lease runs out", got.State)
	}
}

// heartbeatEvents returns the events of replica r writing hb received at.
func heartbeatEvents(t *testing.T, cluster string, hb *agentv1.Heartbeat, at time.Time) []store.Event {
	t.Helper()
	return recordEvents(t, "r", cluster, hb, at)
}

// TestListedRecordAge: a renewal found by listing renews the lease from
// when this replica first saw that revision of it, whatever time its
// publisher wrote in it: a revision new to it as of now; one it saw a
// lease duration ago not at all. A renewal naming a heartbeat not seen,
// or one that does not decode, renews nothing.
func TestListedRecordAge(t *testing.T) {
	clock := newFakeClock()
	l := New(Config{Clock: clock, PauseThreshold: -1})
	f := &follower{l: l, log: hclog.NewNullLogger(), contents: map[string]followed{}}
	listAt := func(evs []store.Event, rev int64) {
		for _, ev := range evs {
			ev.KV.Revision = rev
			f.apply(ev, true)
		}
	}
	ages := map[string]time.Duration{"fresh": time.Second, "future": -time.Hour, "old": time.Hour} // by its publisher's clock
	listed := map[string][]store.Event{}
	for cluster, age := range ages {
		listed[cluster] = heartbeatEvents(t, cluster, hbReady, clock.Now().Add(-age))
		listAt(listed[cluster], 10)
		if got, ok := l.Get(cluster); !ok || !got.LastHeartbeat.Equal(clock.Now()) {
			t.Errorf("listed new record stamped %s old: lease found %v, last heartbeat %s; want renewed now (%s)", age, ok, got.LastHeartbeat, clock.Now())
		}
	}
	seenAt := clock.Now()
	clock.Advance(protocol.LeaseDuration)
	listAt(listed["old"], 10) // the same revision, listed again
	listAt(listed["fresh"], 11)
	for cluster, want := range map[string]time.Time{"old": seenAt, "fresh": clock.Now()} {
		if got, _ := l.Get(cluster); !got.LastHeartbeat.Equal(want) {
			t.Errorf("lease of %s listed again a lease later: last heartbeat %s; want %s", cluster, got.LastHeartbeat, want)
		}
	}
	evs := heartbeatEvents(t, "unseen", hbReady, clock.Now())
	f.apply(evs[1], false) // the renewal without its heartbeat
	f.apply(store.Event{Type: store.EventPut, KV: store.KV{Key: store.HeartbeatKey("bad"), Value: []byte("{")}}, false)
	f.apply(store.Event{Type: store.EventPut, KV: store.KV{Key: store.LivenessKey("bad"), Value: []byte("{")}}, false)
	for _, c := range []string{"unseen", "bad"} {
		if _, ok := l.Get(c); ok {
			t.Errorf("records of %s made a lease; want none", c)
		}
	}
}

// TestRenewalsAreSmall: an unchanged heartbeat due for a refresh rewrites
// the renewal only, not the heartbeat record.
func TestRenewalsAreSmall(t *testing.T) {
	st := etcdtest.Embedded(t)
	p := NewPublisher(st, PublisherConfig{Replica: "a", Refresh: time.Nanosecond})
	runAll(t, p.Run)
	ctx := context.Background()
	p.Heartbeat("c1", hbReady)
	var first store.KV
	deadline := time.Now().Add(pollTimeout)
	for {
		var err error
		if first, err = st.Get(ctx, store.HeartbeatKey("c1")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat record after %s: %v", pollTimeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	beat0, err := st.Get(ctx, store.LivenessKey("c1"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		p.Heartbeat("c1", hbReady) // due at once (refresh 1ns): written at the next flush
		b, err := st.Get(ctx, store.LivenessKey("c1"))
		if err == nil && b.Revision > beat0.Revision {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no renewal within %s: %v", pollTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hb, err := st.Get(ctx, store.HeartbeatKey("c1")); err != nil || hb.Revision != first.Revision {
		t.Errorf("heartbeat record after a renewal of the same content: revision %d → %d, %v; want unchanged", first.Revision, hb.Revision, err)
	}
}

// TestBrokenWatchHoldsExpiry: while Follow cannot watch the records (here:
// its etcd connection closed), renewals may be written that it cannot see,
// so no lease runs out while it is broken (each failed relist holds expiry
// for one more lease duration) nor for one lease duration after it works
// again.
func TestBrokenWatchHoldsExpiry(t *testing.T) {
	st, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer st.Close()
	clock := newFakeClock()
	l := New(Config{Clock: clock, PauseThreshold: -1})
	runAll(t, func(ctx context.Context) error { return Follow(ctx, st, l, hclog.NewNullLogger()) })
	for _, ev := range heartbeatEvents(t, "edge-1", hbReady, clock.Now()) {
		if _, err := st.Put(context.Background(), ev.KV.Key, ev.KV.Value); err != nil {
			t.Fatal(err)
		}
	}
	pollState(t, l, "edge-1", StateReady)
	clock.Advance(30 * time.Second)
	st.Client().Close() // the watch breaks; relisting fails from now on
	deadline := time.Now().Add(pollTimeout)
	for {
		if _, hold := l.Pauses(); hold.Equal(t0.Add(70 * time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			_, hold := l.Pauses()
			t.Fatalf("expiry held until %s after the watch broke; want 70s", hold.Sub(t0))
		}
		time.Sleep(10 * time.Millisecond)
	}
	clock.Advance(20 * time.Second) // 50s after the heartbeat
	l.expire()
	if got, _ := l.Get("edge-1"); got.State != StateReady {
		t.Errorf("lease 50s after its heartbeat, 20s after the watch broke = %s; want Ready (held)", got.State)
	}
}

// TestStreamMovesBack: a cluster whose stream goes to another replica and
// back gets renewed again, although the first replica's last heartbeat of
// it has the same content as now (the record was rewritten meanwhile, and
// renewals name the content they renew).
func TestStreamMovesBack(t *testing.T) {
	st := etcdtest.Embedded(t)
	a := NewPublisher(st, PublisherConfig{Replica: "a", Refresh: time.Nanosecond})
	b := NewPublisher(st, PublisherConfig{Replica: "b", Refresh: time.Nanosecond})
	runAll(t, a.Run, b.Run)
	ctx := context.Background()
	lease := func() int64 {
		kv, err := st.Client().Get(ctx, store.HeartbeatKey("c1"))
		if err != nil || len(kv.Kvs) == 0 {
			return 0
		}
		return kv.Kvs[0].Lease
	}
	waitLease := func(p *Publisher, hb *agentv1.Heartbeat, other int64) int64 {
		t.Helper()
		deadline := time.Now().Add(pollTimeout)
		for {
			p.Heartbeat("c1", hb)
			if l := lease(); l != 0 && l != other {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("heartbeat record not rewritten by the replica holding the stream within %s", pollTimeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	la := waitLease(a, hbReady, 0)  // a holds the stream
	lb := waitLease(b, hbReady, la) // the stream moves to b
	_ = waitLease(a, hbReady, lb)   // and back to a, same content as a last wrote: a's record must come back
	if got := lease(); got != la {
		t.Errorf("heartbeat record under lease %x; want a's %x", got, la)
	}
}
