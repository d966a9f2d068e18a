package liveness

import (
	"context"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/liveness/livenesstest"
	"github.com/tetherproj/tether/internal/protocol"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock() *livenesstest.Clock { return livenesstest.NewClock(t0) }

func ready(s agentv1.ConditionStatus) *agentv1.Heartbeat {
	return &agentv1.Heartbeat{Conditions: []*agentv1.Condition{{Type: "Ready", Status: s}}}
}

var (
	hbReady    = ready(agentv1.ConditionStatus_CONDITION_STATUS_TRUE)
	hbNotReady = ready(agentv1.ConditionStatus_CONDITION_STATUS_FALSE)
)

func TestLeaseStates(t *testing.T) {
	type beat struct {
		at time.Duration // since t0
		hb *agentv1.Heartbeat
	}
	tests := []struct {
		name      string
		beats     []beat
		check     time.Duration // when expire runs, since t0
		want      State
		wantSince time.Duration
	}{
		{"fresh heartbeat is Ready", []beat{{0, hbReady}}, 39 * time.Second, StateReady, 0},
		{"heartbeat without conditions is Ready", []beat{{0, &agentv1.Heartbeat{}}}, time.Second, StateReady, 0},
		{"lease runs out at exactly the duration", []beat{{0, hbReady}}, 40 * time.Second, StateUnknown, 40 * time.Second},
		{"heartbeats keep it Ready", []beat{{0, hbReady}, {30 * time.Second, hbReady}, {60 * time.Second, hbReady}}, 99 * time.Second, StateReady, 0},
		// Seen late (at 80 s): Unknown since the hub saw it, not since 70 s.
		{"unknown since the hub saw the lease run out", []beat{{0, hbReady}, {30 * time.Second, hbReady}}, 80 * time.Second, StateUnknown, 80 * time.Second},
		{"Ready condition False is NotReady", []beat{{0, hbReady}, {10 * time.Second, hbNotReady}}, 20 * time.Second, StateNotReady, 10 * time.Second},
		{"a heartbeat after Unknown makes it Ready again", []beat{{0, hbReady}, {50 * time.Second, hbReady}}, 60 * time.Second, StateReady, 50 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			l := New(Config{Clock: clock, PauseThreshold: -1})
			at := time.Duration(0)
			for _, b := range tt.beats {
				clock.Advance(b.at - at)
				at = b.at
				l.expire()
				l.Heartbeat("edge-1", b.hb)
			}
			clock.Advance(tt.check - at)
			l.expire()
			got, ok := l.Get("edge-1")
			if !ok || got.State != tt.want || !got.Since.Equal(t0.Add(tt.wantSince)) {
				t.Errorf("lease = %s since %s (found %v); want %s since %s", got.State, got.Since.Sub(t0), ok, tt.want, tt.wantSince)
			}
		})
	}
}

// waitState blocks until cluster is in state, or fails after a deadline.
func waitState(t *testing.T, l *Leases, cluster string, want State) Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rev uint64
	for {
		if got, ok := l.Get(cluster); ok && got.State == want {
			return got
		}
		var err error
		if rev, err = l.Wait(ctx, rev); err != nil {
			got, _ := l.Get(cluster)
			t.Fatalf("cluster %s is %s; want %s", cluster, got.State, want)
		}
	}
}

func TestRunExpiresLeasesOnTheClock(t *testing.T) {
	clock := newFakeClock()
	l := New(Config{Clock: clock, LeaseDuration: 40 * time.Second, PauseThreshold: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v; want nil", err)
		}
	}()

	l.Heartbeat("edge-1", hbReady)
	l.Heartbeat("edge-2", hbReady)
	waitState(t, l, "edge-1", StateReady)
	clock.Advance(30 * time.Second)
	l.Heartbeat("edge-1", hbReady) // edge-1 renews, edge-2 does not
	clock.Advance(15 * time.Second)
	if got := waitState(t, l, "edge-2", StateUnknown); !got.Since.Equal(t0.Add(45 * time.Second)) {
		t.Errorf("edge-2 Unknown since %s; want 45s (when the hub saw its lease run out)", got.Since.Sub(t0))
	}
	if got, _ := l.Get("edge-1"); got.State != StateReady {
		t.Errorf("edge-1 = %s after a heartbeat 15s ago; want Ready", got.State)
	}
	clock.Advance(30 * time.Second)
	if got := waitState(t, l, "edge-1", StateUnknown); !got.Since.Equal(t0.Add(75 * time.Second)) {
		t.Errorf("edge-1 Unknown since %s; want 75s (last heartbeat at 30s + 40s, seen at 75s)", got.Since.Sub(t0))
	}
	l.Heartbeat("edge-2", hbReady) // back, and its lease runs again
	waitState(t, l, "edge-2", StateReady)
	clock.Advance(41 * time.Second)
	waitState(t, l, "edge-2", StateUnknown)
}

func TestWaitWakesOnlyOnChanges(t *testing.T) {
	l := New(Config{Clock: newFakeClock()})
	l.Heartbeat("edge-1", hbReady)
	_, rev := l.List()
	l.Heartbeat("edge-1", ready(agentv1.ConditionStatus_CONDITION_STATUS_TRUE)) // same content: only renews
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got, err := l.Wait(ctx, rev); err == nil {
		t.Errorf("Wait after an identical heartbeat = %d; want it to block", got)
	}
	hb := &agentv1.Heartbeat{ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"cpu": "8"}}}
	l.Heartbeat("edge-1", hb)
	got, err := l.Wait(context.Background(), rev)
	if err != nil || got != rev+1 {
		t.Errorf("Wait after a capacity change = %d, %v; want %d", got, err, rev+1)
	}
	leases, listRev := l.List()
	if len(leases) != 1 || listRev != got || leases[0].Heartbeat.GetResourceSummary().GetAllocatable()["cpu"] != "8" {
		t.Errorf("List = %+v at %d; want edge-1 with cpu 8 at %d", leases, listRev, got)
	}
	if l.Duration() != protocol.LeaseDuration {
		t.Errorf("Duration = %s; want the default %s", l.Duration(), protocol.LeaseDuration)
	}
}
