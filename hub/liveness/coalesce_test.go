package liveness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/protocol"
)

// withAPIs is a Ready heartbeat listing group version "g<i>/v1" with n
// resources named name (repeated).
func withAPIs(i, n int, name string) *agentv1.Heartbeat {
	hb := proto.Clone(hbReady).(*agentv1.Heartbeat)
	e := &agentv1.APIEnablement{GroupVersion: fmt.Sprintf("g%d/v1", i)}
	for range n {
		e.Resources = append(e.Resources, &agentv1.APIResource{Name: name, Kind: "Thing"})
	}
	hb.ApiEnablements = []*agentv1.APIEnablement{e}
	return hb
}

// grant is an etcd lease for a Publisher's records, as Run grants one.
func grant(t *testing.T, st *store.Store) (context.Context, func(context.Context, *Publisher) error) {
	t.Helper()
	ctx := context.Background()
	g, err := st.Client().Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, func(ctx context.Context, p *Publisher) error { return p.flush(ctx, g.ID) }
}

// stored returns the heartbeat in cluster's record and how many times the
// record was written (etcd's version of the key).
func stored(t *testing.T, st *store.Store, cluster string) (*agentv1.Heartbeat, int64) {
	t.Helper()
	resp, err := st.Client().Get(context.Background(), store.HeartbeatKey(cluster))
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("heartbeat record of %s: %v (found %d)", cluster, err, len(resp.Kvs))
	}
	hb, _, err := decodeContent(resp.Kvs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	return hb, resp.Kvs[0].Version
}

// TestChangingAPIListIsCoalesced: an agent whose API list changes at
// every heartbeat, 1,000 times over 10 s with a flush after each, has its
// heartbeat record written a bounded number of times, not once per
// change, while renewals go on; once ContentInterval has passed, the last
// list is what etcd holds.
func TestChangingAPIListIsCoalesced(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: clock})
	ctx, flush := grant(t, st)
	const changes = 1000
	for i := range changes {
		p.Heartbeat("c1", withAPIs(i, 1, "things"))
		if err := flush(ctx, p); err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
		clock.Advance(10 * time.Millisecond)
	}
	clock.Advance(DefaultContentInterval)
	if err := flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	hb, writes := stored(t, st, "c1")
	if got := hb.GetApiEnablements()[0].GetGroupVersion(); got != fmt.Sprintf("g%d/v1", changes-1) {
		t.Errorf("stored API list = %s; want the last one, g%d/v1", got, changes-1)
	}
	if writes > 3 {
		t.Errorf("heartbeat record written %d times for %d changes over %s; want at most 3 (one per %s, and the last)",
			writes, changes, changes*10*time.Millisecond, DefaultContentInterval)
	}
	resp, err := st.Client().Get(ctx, store.LivenessKey("c1"))
	if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Version < writes {
		t.Errorf("renewal record: %v; want written at least as often as the heartbeat record (%d)", err, writes)
	}
}

// TestStateChangesAreNotDelayed: a state change is written at once, even
// within ContentInterval of new content; only a second one waits.
func TestStateChangesAreNotDelayed(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: clock})
	ctx, flush := grant(t, st)
	steps := []struct {
		hb    *agentv1.Heartbeat
		state State
	}{
		{withAPIs(1, 1, "things"), StateReady},
		{hbNotReady, StateNotReady}, // at once
		{hbReady, StateNotReady},    // a second change within the interval waits
	}
	for i, s := range steps {
		p.Heartbeat("c1", s.hb)
		if err := flush(ctx, p); err != nil {
			t.Fatal(err)
		}
		if hb, _ := stored(t, st, "c1"); stateOf(hb) != s.state {
			t.Errorf("step %d: stored state %s; want %s", i, stateOf(hb), s.state)
		}
		clock.Advance(time.Second)
	}
	clock.Advance(DefaultContentInterval)
	if err := flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	if hb, _ := stored(t, st, "c1"); stateOf(hb) != StateReady {
		t.Errorf("stored state after the interval = %s; want Ready, the latest", stateOf(hb))
	}
}

// TestHeartbeatPastLimitsIsNotWritten: a heartbeat past HeartbeatLimits is
// refused with an error naming the bound; the Publisher does not write it,
// and renews the lease with the content last written.
func TestHeartbeatPastLimitsIsNotWritten(t *testing.T) {
	st := etcdtest.Embedded(t)
	clock := newFakeClock()
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: clock, HeartbeatLimits: HeartbeatLimits{MaxAPIEntries: 10}})
	ctx, flush := grant(t, st)
	big := withAPIs(2, 10, "things") // 11 entries
	err := p.CheckHeartbeat(big)
	if !errors.Is(err, ErrHeartbeatTooLarge) || !strings.Contains(err.Error(), "11 API entries (group versions and resources), more than 10") {
		t.Errorf("CheckHeartbeat(11 entries) = %v; want ErrHeartbeatTooLarge naming 11 and 10", err)
	}
	p.Heartbeat("c1", withAPIs(1, 9, "things"))
	if err := flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	clock.Advance(protocol.LeaseDuration) // past Refresh and ContentInterval
	p.Heartbeat("c1", big)
	if err := flush(ctx, p); err != nil {
		t.Fatal(err)
	}
	hb, writes := stored(t, st, "c1")
	if got := hb.GetApiEnablements()[0].GetGroupVersion(); got != "g1/v1" || writes != 1 || p.Refused() != 1 {
		t.Errorf("after a heartbeat past the limits: stored %s written %d times, refused %d; want g1/v1 once, 1 refused", got, writes, p.Refused())
	}
	resp, err := st.Client().Get(ctx, store.LivenessKey("c1"))
	if err != nil || len(resp.Kvs) == 0 || resp.Kvs[0].Version != 2 {
		t.Errorf("renewal record after the refused heartbeat: %v; want renewed (version 2)", err)
	}
}

// TestLargeHeartbeatsOfManyClustersAreBatchedBySize: twelve clusters'
// heartbeats of about 400 KB each, pending at once, are all written
// although together they exceed etcd's request limit: a transaction holds
// at most maxBatchBytes.
func TestLargeHeartbeatsOfManyClustersAreBatchedBySize(t *testing.T) {
	st := etcdtest.Embedded(t)
	p := NewPublisher(st, PublisherConfig{Replica: "a", Clock: newFakeClock()})
	ctx, flush := grant(t, st)
	name := strings.Repeat("x", 400<<10)
	for i := range 12 {
		p.Heartbeat(fmt.Sprintf("c%d", i), withAPIs(i, 1, name))
	}
	if err := flush(ctx, p); err != nil {
		t.Fatalf("flush of twelve large heartbeats: %v", err)
	}
	for i := range 12 {
		if hb, _ := stored(t, st, fmt.Sprintf("c%d", i)); hb.GetApiEnablements()[0].GetGroupVersion() != fmt.Sprintf("g%d/v1", i) {
			t.Errorf("cluster c%d: stored %v", i, hb.GetApiEnablements()[0].GetGroupVersion())
		}
	}
}
