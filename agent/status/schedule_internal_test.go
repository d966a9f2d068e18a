package status

import (
	"testing"
	"time"
)

// TestScheduleWorkBurst: a work's first workBurst changes go out at once,
// later ones one per minInterval; a quiet work gets its burst back.
func TestScheduleWorkBurst(t *testing.T) {
	const every = 2 * time.Second
	s := newSchedule(every, 3, 1000, 1000)
	now := time.Unix(1000, 0)
	for i := range 3 {
		if w := s.wait("a", now); w != 0 {
			t.Fatalf("report %d: wait(a) = %v; want 0 (within the burst)", i+1, w)
		}
		s.take("a", now)
		now = now.Add(10 * time.Millisecond)
	}
	w := s.wait("a", now)
	if w <= 0 || w > every {
		t.Fatalf("report 4: wait(a) = %v; want in (0, %v]", w, every)
	}
	if w := s.wait("b", now); w != 0 {
		t.Fatalf("wait(b) = %v; want 0: another work's burst is its own", w)
	}
	now = now.Add(w)
	if got := s.wait("a", now); got != 0 {
		t.Fatalf("after waiting %v: wait(a) = %v; want 0", w, got)
	}
	s.take("a", now)
	now = now.Add(3 * every)
	for i := range 3 {
		if w := s.wait("a", now); w != 0 {
			t.Fatalf("after a quiet %v, report %d: wait(a) = %v; want 0", 3*every, i+1, w)
		}
		s.take("a", now)
	}
}

// TestScheduleStreamRate: all works together stay within the stream's
// burst and rate, however many change at once.
func TestScheduleStreamRate(t *testing.T) {
	const rate, burst = 100, 50
	s := newSchedule(time.Second, 4, rate, burst)
	now := time.Unix(1000, 0)
	sent := 0
	end := now.Add(2 * time.Second)
	for key := 0; now.Before(end); key++ {
		k := string(rune('a' + key%1000))
		if w := s.wait(k, now); w > 0 {
			now = now.Add(w)
			continue
		}
		s.take(k, now)
		sent++
	}
	if limit := burst + 2*rate + 1; sent > limit {
		t.Fatalf("sent %d reports in 2s; want at most %d (burst %d + rate %d/s)", sent, limit, burst, rate)
	}
	if sent < burst+2*rate-1 {
		t.Fatalf("sent %d reports in 2s; want about %d: the schedule holds back what the rate allows", sent, burst+2*rate)
	}
}

// TestScheduleForget: a work no longer held starts over with a full
// burst.
func TestScheduleForget(t *testing.T) {
	s := newSchedule(time.Minute, 1, 1000, 1000)
	now := time.Unix(1000, 0)
	s.take("a", now)
	if w := s.wait("a", now); w == 0 {
		t.Fatal("wait(a) = 0 after its burst of 1; want a wait")
	}
	s.forget("a")
	if w := s.wait("a", now); w != 0 {
		t.Fatalf("wait(a) = %v after forget; want 0", w)
	}
}
