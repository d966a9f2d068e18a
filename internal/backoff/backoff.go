// Package backoff is the one retry-delay rule of the hub and the agent: an
// exponential step from a base, doubling per retry, capped, with "equal
// jitter" where many parties retry at once.
//
//	p := backoff.Policy{Base: time.Second, Max: 30 * time.Second, Jitter: true}
//	wait := p.Delay(attempt) // attempt 0 for the first retry
//
// A Policy is a value; the caller counts its attempts (per key, per
// stream), so the rule is a pure function of (attempt, r): Step and
// DelayWith are tested with tables. It imports only the standard library.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy is an exponential backoff: the step of retry number attempt (0
// for the first) is Base·2^attempt, at most Max.
type Policy struct {
	// Base is the step of the first retry.
	Base time.Duration
	// Max caps the step.
	Max time.Duration
	// Jitter draws each delay uniformly from [step/2, step) ("equal
	// jitter"): parties that failed together spread their retries, and
	// each still waits at least half its step. Without it the delay is the
	// step (one loop retrying its own keys needs no spreading).
	Jitter bool
}

// Step returns the step of retry attempt: Base·2^attempt, at most Max; a
// negative attempt is the first, a Base of 0 or less no wait.
func (p Policy) Step(attempt int) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	step := p.Base
	for i := 0; i < attempt && step < p.Max; i++ {
		if step > p.Max/2 {
			return p.Max
		}
		step *= 2
	}
	return min(step, p.Max)
}

// Delay returns the wait before retry attempt, jittered with math/rand.
func (p Policy) Delay(attempt int) time.Duration {
	return p.DelayWith(attempt, rand.Float64())
}

// DelayWith returns the wait before retry attempt, jittered by r in
// [0, 1) when p.Jitter (r outside it is no jitter: the least delay).
func (p Policy) DelayWith(attempt int, r float64) time.Duration {
	step := p.Step(attempt)
	if !p.Jitter {
		return step
	}
	if r < 0 || r >= 1 {
		r = 0
	}
	half := step / 2
	return half + time.Duration(r*float64(step-half))
}
