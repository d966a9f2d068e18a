package apply

import (
	"fmt"
	"testing"
	"time"
)

// TestEventLimiter: one Event is written at most every eventEvery, its
// next write counting the failures in between; another Event is not held
// back; the Events remembered stay within eventsTracked.
func TestEventLimiter(t *testing.T) {
	l := newEventLimiter()
	t0 := time.Unix(1000, 0)
	if ok, n := l.allow("a", t0); !ok || n != 1 {
		t.Fatalf("first failure: allow = %v, %d; want true, 1", ok, n)
	}
	for i := 1; i <= 3; i++ {
		if ok, _ := l.allow("a", t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("failure %d within eventEvery: written; want only counted", i+1)
		}
	}
	if ok, n := l.allow("b", t0.Add(time.Second)); !ok || n != 1 {
		t.Errorf("another Event: allow = %v, %d; want true, 1", ok, n)
	}
	if ok, n := l.allow("a", t0.Add(eventEvery)); !ok || n != 4 {
		t.Errorf("after eventEvery: allow = %v, %d; want true, 4 (this failure and 3 not written)", ok, n)
	}
	for i := range eventsTracked {
		l.allow(fmt.Sprint("n", i), t0.Add(eventEvery))
	}
	if len(l.seen) > eventsTracked {
		t.Errorf("tracked %d Events; want at most %d", len(l.seen), eventsTracked)
	}
}
