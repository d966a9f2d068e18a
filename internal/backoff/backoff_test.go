package backoff

import (
	"testing"
	"time"
)

func TestDelayWith(t *testing.T) {
	jittered := Policy{Base: time.Second, Max: 30 * time.Second, Jitter: true}
	plain := Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	tests := []struct {
		name    string
		p       Policy
		attempt int
		r       float64
		want    time.Duration
	}{
		{"first retry, least jitter", jittered, 0, 0, 500 * time.Millisecond},
		{"first retry, most jitter", jittered, 0, 0.999999, 999999500 * time.Nanosecond},
		{"first retry, middle", jittered, 0, 0.5, 750 * time.Millisecond},
		{"third retry doubles twice", jittered, 2, 0, 2 * time.Second},
		{"step below the cap", jittered, 4, 0, 8 * time.Second},
		{"step reaches the cap", jittered, 5, 0, 15 * time.Second},
		{"capped", jittered, 5, 0.999999, 30*time.Second - 15*time.Microsecond},
		{"far past the cap", jittered, 40, 0.5, 22500 * time.Millisecond},
		{"shift overflow stays capped", jittered, 63, 0, 15 * time.Second},
		{"huge attempt stays capped", jittered, 1 << 40, 0, 15 * time.Second},
		{"r out of range is no jitter", jittered, 0, 1.5, 500 * time.Millisecond},
		{"negative r is no jitter", jittered, 0, -1, 500 * time.Millisecond},
		{"negative attempt is the first", jittered, -3, 0, 500 * time.Millisecond},
		{"no jitter: the step", plain, 0, 0.9, 500 * time.Millisecond},
		{"no jitter: doubles", plain, 3, 0.9, 4 * time.Second},
		{"no jitter: capped", plain, 7, 0.9, 30 * time.Second},
		{"a cap not a power of two of the base", Policy{Base: time.Second, Max: time.Minute}, 6, 0, time.Minute},
		{"no base, no wait", Policy{Max: time.Minute, Jitter: true}, 1 << 40, 0.5, 0},
		{"the largest cap", Policy{Base: time.Second, Max: 1<<63 - 1}, 200, 0, 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.DelayWith(tt.attempt, tt.r); got != tt.want {
				t.Errorf("%+v.DelayWith(%d, %v) = %s; want %s", tt.p, tt.attempt, tt.r, got, tt.want)
			}
		})
	}
}

// TestDelayBounds checks the rule over every attempt: within [Base/2, Max],
// never shorter than the attempt before.
func TestDelayBounds(t *testing.T) {
	p := Policy{Base: 5 * time.Second, Max: 5 * time.Minute, Jitter: true}
	for attempt := range 70 {
		for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999} {
			d := p.DelayWith(attempt, r)
			if d < p.Base/2 || d > p.Max {
				t.Errorf("DelayWith(%d, %v) = %s; want within [%s, %s]", attempt, r, d, p.Base/2, p.Max)
			}
			if attempt > 0 && d < p.DelayWith(attempt-1, r) {
				t.Errorf("DelayWith(%d, %v) = %s; shorter than the attempt before", attempt, r, d)
			}
		}
		if d := p.Delay(attempt); d < p.Step(attempt)/2 || d >= p.Step(attempt) {
			t.Errorf("Delay(%d) = %s; want within [%s, %s)", attempt, d, p.Step(attempt)/2, p.Step(attempt))
		}
	}
}
