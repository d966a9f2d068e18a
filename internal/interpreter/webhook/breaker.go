package webhook

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Circuit breaker settings, one breaker per webhook.
const (
	// BreakerFailures is how many calls in a row must fail (transport
	// error, timeout, non-200 status, unreadable response) to open a
	// webhook's breaker.
	BreakerFailures = 5
	// BreakerCooldown is how long an open breaker fails calls at once,
	// without contacting the webhook; then the next call is sent as a
	// probe in the background (half-open) while it and the others fail at
	// once: the probe's success closes the breaker, its failure opens it
	// for another cool-down.
	BreakerCooldown = 30 * time.Second
)

// ErrBreakerOpen is the error (under errors.Is) of a call refused because
// the webhook's breaker is open or half-open with its probe in flight.
var ErrBreakerOpen = errors.New("webhook: circuit breaker open")

// Breaker states, as BreakerState reports them.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half-open"
)

// breaker counts one webhook's consecutive failures and, past
// BreakerFailures, fails calls fast for BreakerCooldown, so that a dead or
// slow webhook does not hold the renderer, detector or aggregator for its
// timeout on every call.
type breaker struct {
	// mu guards every field.
	mu sync.Mutex
	// failures is the number of consecutive failed calls.
	failures int
	// openUntil is when an open breaker turns half-open.
	openUntil time.Time
	// probing is set while the half-open probe call is in flight.
	probing bool
	// last is the error of the last failed call, for the open error.
	last string
}

// allow says whether a call may go out at now. probe is set when the call
// is the half-open probe; done must then be called.
func (b *breaker) allow(uid string, now time.Time) (probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.stateLocked(now) {
	case StateClosed:
		return false, nil
	case StateOpen:
		return false, fmt.Errorf("webhook %s: %w after %d consecutive failures (last: %s); next try in %s",
			uid, ErrBreakerOpen, b.failures, b.last, b.openUntil.Sub(now).Round(time.Second))
	}
	if b.probing {
		return false, fmt.Errorf("webhook %s: %w (half-open, a probe call is in flight; last failure: %s)",
			uid, ErrBreakerOpen, b.last)
	}
	b.probing = true
	return true, nil
}

// done records a call's outcome: failed is nil on success. A call that
// neither succeeded nor failed (the caller gave up) is recorded with
// counted false and only ends a probe.
func (b *breaker) done(now time.Time, probe, counted bool, failed error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case !counted:
	case failed == nil:
		b.failures = 0
	default:
		b.failures++
		b.last = failed.Error()
		if b.failures >= BreakerFailures {
			b.openUntil = now.Add(BreakerCooldown)
		}
	}
}

// state is closed, open or half-open at now.
func (b *breaker) state(now time.Time) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stateLocked(now)
}

func (b *breaker) stateLocked(now time.Time) string {
	switch {
	case b.failures < BreakerFailures:
		return StateClosed
	case now.Before(b.openUntil):
		return StateOpen
	default:
		return StateHalfOpen
	}
}
