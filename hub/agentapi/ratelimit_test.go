package agentapi

import (
	"fmt"
	"testing"
	"time"
)

func TestRegistrationLimitsRememberBoundedSources(t *testing.T) {
	r := newRegistrationLimits(Config{RegistrationRate: 1, RegistrationBurst: 1, RegistrationTotalRate: 1e9, RegistrationTotalBurst: 1e9})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := r.allow("victim", now); err != nil {
		t.Fatalf("first registration of a source: %v", err)
	}
	if err := r.allow("victim", now); err == nil {
		t.Fatal("second registration of a source at once was allowed; want its burst of 1 to refuse it")
	}
	for i := range maxRegistrationSources + 10 {
		if err := r.allow(fmt.Sprintf("10.0.%d.%d", i/256, i%256), now.Add(time.Millisecond)); err != nil {
			t.Fatalf("first registration of source %d: %v", i, err)
		}
	}
	if r.sources.len() > maxRegistrationSources {
		t.Errorf("%d sources remembered; want at most %d", r.sources.len(), maxRegistrationSources)
	}
	// Idle long enough to refill, every source is forgotten at the next
	// new one.
	r.allow("late", now.Add(time.Hour))
	if r.sources.len() != 1 {
		t.Errorf("%d sources remembered after all went idle; want 1", r.sources.len())
	}
}

func TestRegistrationTotalCeiling(t *testing.T) {
	r := newRegistrationLimits(Config{RegistrationRate: 1, RegistrationBurst: 5, RegistrationTotalRate: 0.001, RegistrationTotalBurst: 2})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, src := range []string{"a", "b"} {
		if err := r.allow(src, now); err != nil {
			t.Fatalf("registration %d: %v", i, err)
		}
	}
	if err := r.allow("c", now); err == nil {
		t.Error("a third registration past a total burst of 2 was allowed")
	}
}
