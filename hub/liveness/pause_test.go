package liveness

import (
	"context"
	"testing"
	"time"
)

// TestPauseHoldsExpiry: a hub that was not running (SIGSTOP, VM pause)
// finds its leases run out on resuming; it must not declare them Unknown
// before one lease duration after the resume, so that heartbeats get in.
func TestPauseHoldsExpiry(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration
		pause     time.Duration // after the heartbeat at 0, seen by nothing
		beatAfter bool          // a heartbeat arrives right after the resume
		check     time.Duration // since the resume
		want      State
		wantSince time.Duration // since t0
	}{
		{"paused 70s: held right after the resume", 0, 70 * time.Second, false, 0, StateReady, 0},
		{"paused 70s: held for one lease duration", 0, 70 * time.Second, false, 39 * time.Second, StateReady, 0},
		{"paused 70s, no heartbeat: Unknown one lease after the resume", 0, 70 * time.Second, false, 40 * time.Second, StateUnknown, 110 * time.Second},
		{"paused 70s, a heartbeat after the resume: its own lease", 0, 70 * time.Second, true, 45 * time.Second, StateUnknown, 110 * time.Second},
		{"paused 15min: held as well", 0, 15 * time.Minute, false, 39 * time.Second, StateReady, 0},
		{"check off: Unknown at the resume", -1, 70 * time.Second, false, 0, StateUnknown, 70 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			l := New(Config{Clock: clock, PauseThreshold: tt.threshold})
			l.Heartbeat("edge-1", hbReady)
			for range 10 { // the hub runs, waking every second
				clock.Advance(time.Second)
				l.expire()
			}
			clock.Advance(tt.pause - 10*time.Second)
			l.expire() // the resume
			if tt.beatAfter {
				l.Heartbeat("edge-1", hbReady)
			}
			for at := time.Duration(0); at < tt.check; at += time.Second {
				clock.Advance(time.Second)
				l.expire()
			}
			got, _ := l.Get("edge-1")
			if got.State != tt.want || (tt.want == StateUnknown && !got.Since.Equal(t0.Add(tt.wantSince))) {
				t.Errorf("lease = %s since %s; want %s since %s", got.State, got.Since.Sub(t0), tt.want, tt.wantSince)
			}
		})
	}
}

func TestRunNoticesAPause(t *testing.T) {
	clock := newFakeClock()
	l := New(Config{Clock: clock, LeaseDuration: 40 * time.Second})
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
	deadline := time.Now().Add(10 * time.Second)
	for running := false; !running; { // Run has looked once
		l.mu.Lock()
		running = !l.awake.IsZero()
		l.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("Run never ran expire")
		}
		time.Sleep(time.Millisecond)
	}
	clock.Advance(70 * time.Second) // Run's one-second tick comes 69 s late
	for {
		n, until := l.Pauses()
		if n == 1 {
			if !until.Equal(t0.Add(110 * time.Second)) {
				t.Errorf("expiry held until %s; want 110s (resume + lease)", until.Sub(t0))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pauses = %d; want the 70 s jump noticed", n)
		}
		time.Sleep(time.Millisecond)
	}
	if got, _ := l.Get("edge-1"); got.State != StateReady {
		t.Errorf("edge-1 = %s right after a pause; want Ready (held)", got.State)
	}
}
