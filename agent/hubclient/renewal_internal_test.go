package hubclient

import (
	"testing"
	"time"
)

func TestRenewAt(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		lifetime time.Duration
		r        float64
		want     time.Duration // after issued
	}{
		{"earliest, one minute", time.Minute, 0, 42 * time.Second},
		{"middle, one minute", time.Minute, 0.5, 45 * time.Second},
		{"latest, one minute", time.Minute, 0.999999, 48 * time.Second},
		{"earliest, one year", 365 * 24 * time.Hour, 0, 255*24*time.Hour + 12*time.Hour},
		{"middle, one year", 365 * 24 * time.Hour, 0.5, 273*24*time.Hour + 18*time.Hour},
		{"r out of range is the earliest", time.Minute, 1, 42 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renewAt(issued, issued.Add(tt.lifetime), tt.r).Sub(issued)
			if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
				t.Errorf("renewAt(%s, r=%g) = issued+%s; want issued+%s", tt.lifetime, tt.r, got, tt.want)
			}
		})
	}
}

// TestRenewAtJitterBounds: whatever r, renewal falls within [70%, 80%] of
// the lifetime, so before expiry with a quarter left for retries.
func TestRenewAtJitterBounds(t *testing.T) {
	issued := time.Now()
	for _, life := range []time.Duration{time.Minute, time.Hour, 365 * 24 * time.Hour} {
		lo, hi := issued.Add(time.Duration(0.70*float64(life))), issued.Add(time.Duration(0.80*float64(life)))
		for i := range 1000 {
			r := float64(i) / 1000
			if got := renewAt(issued, issued.Add(life), r); got.Before(lo) || got.After(hi) {
				t.Fatalf("renewAt(%s, r=%g) = issued+%s; want within [%s, %s]", life, r, got.Sub(issued), lo.Sub(issued), hi.Sub(issued))
			}
		}
	}
}

func TestRenewRetryAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		left     time.Duration // until the certificate expires
		attempt  int
		r        float64
		min, max time.Duration
	}{
		{"first refusal, a year left", 90 * 24 * time.Hour, 0, 0, renewRetry.Base / 2, renewRetry.Base / 2},
		{"many refusals, a year left: capped backoff", 90 * 24 * time.Hour, 20, 0.5, renewRetry.Max / 2, renewRetry.Max},
		{"15 s left: halfway to expiry", 15 * time.Second, 3, 0.5, 7500 * time.Millisecond, 7500 * time.Millisecond},
		{"3 s left: not sooner than the hub's pace", 3 * time.Second, 5, 0.5, renewRetryMin, renewRetryMin},
		{"expired: the plain backoff", -time.Second, 0, 0, renewRetry.Base / 2, renewRetry.Base / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renewRetryAt(now, now.Add(tt.left), tt.attempt, tt.r).Sub(now)
			if got < tt.min || got > tt.max {
				t.Errorf("renewRetryAt(%s left, attempt %d) = now+%s; want within [%s, %s]", tt.left, tt.attempt, got, tt.min, tt.max)
			}
		})
	}
}
