package hubclient

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		name    string
		attempt int
		r       float64
		want    time.Duration
	}{
		{"first retry, least jitter", 0, 0, 500 * time.Millisecond},
		{"first retry, most jitter", 0, 0.999999, 999999500 * time.Nanosecond},
		{"first retry, middle", 0, 0.5, 750 * time.Millisecond},
		{"third retry doubles twice", 2, 0, 2 * time.Second},
		{"step below the cap", 4, 0, 8 * time.Second},
		{"step reaches the cap", 5, 0, 15 * time.Second},
		{"capped", 5, 0.999999, 30*time.Second - 15*time.Microsecond},
		{"far past the cap", 40, 0.5, 22500 * time.Millisecond},
		{"shift overflow stays capped", 63, 0, 15 * time.Second},
		{"r out of range is no jitter", 0, 1.5, 500 * time.Millisecond},
		{"negative r is no jitter", 0, -1, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := backoff(reconnectBase, reconnectMax, tt.attempt, tt.r)
			if got != tt.want {
				t.Errorf("backoff(%s, %s, %d, %v) = %s; want %s", reconnectBase, reconnectMax, tt.attempt, tt.r, got, tt.want)
			}
		})
	}
}

// TestBackoffBounds checks the jitter rule over every attempt: the delay is
// within [step/2, step) and never above the cap.
func TestBackoffBounds(t *testing.T) {
	for attempt := range 70 {
		for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999} {
			d := backoff(applyRetryBase, applyRetryMax, attempt, r)
			if d < applyRetryBase/2 || d > applyRetryMax {
				t.Errorf("backoff(%d, %v) = %s; want within [%s, %s]", attempt, r, d, applyRetryBase/2, applyRetryMax)
			}
			if attempt > 0 && d < backoff(applyRetryBase, applyRetryMax, attempt-1, r) {
				t.Errorf("backoff(%d, %v) = %s; shorter than the attempt before", attempt, r, d)
			}
		}
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
