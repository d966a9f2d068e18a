package hubclient

import (
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/backoff"
)

// TestBackoffPolicies pins the client's backoffs (internal/backoff has the
// rule's tests): reconnects from 0.5–1 s up to 15–30 s, apply retries from
// 2.5–5 s up to 2.5–5 min, renewals from 2.5–5 s up to 5–10 min.
func TestBackoffPolicies(t *testing.T) {
	tests := []struct {
		name      string
		p         backoff.Policy
		first, at time.Duration // DelayWith(0, 0) and the cap
	}{
		{"reconnect", reconnect, 500 * time.Millisecond, 30 * time.Second},
		{"apply retry", applyRetry, 2500 * time.Millisecond, 5 * time.Minute},
		{"renewal retry", renewRetry, 2500 * time.Millisecond, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.DelayWith(0, 0); got != tt.first || !tt.p.Jitter || tt.p.Max != tt.at {
				t.Errorf("%s = %+v, first delay %s; want first %s, cap %s, jittered", tt.name, tt.p, got, tt.first, tt.at)
			}
		})
	}
}

func TestRetryAfterDelay(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		r    float64
		want time.Duration
	}{
		{"as asked", 10 * time.Second, 0, 10 * time.Second},
		{"with jitter up to a tenth", 10 * time.Second, 0.5, 10*time.Second + 500*time.Millisecond},
		{"capped", 24 * time.Hour, 0, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfterDelay(tt.d, tt.r); got != tt.want {
				t.Errorf("retryAfterDelay(%s, %v) = %s; want %s", tt.d, tt.r, got, tt.want)
			}
		})
	}
}

func TestEvictEvery(t *testing.T) {
	for _, tt := range []struct{ grace, want time.Duration }{
		{time.Hour, time.Minute},
		{5 * time.Minute, 30 * time.Second},
		{100 * time.Millisecond, 10 * time.Millisecond},
		{time.Nanosecond, time.Millisecond},
	} {
		if got := evictEvery(tt.grace); got != tt.want {
			t.Errorf("evictEvery(%s) = %s; want %s", tt.grace, got, tt.want)
		}
	}
}
