package hubclient

import (
	"time"

	"github.com/tetherproj/tether/internal/protocol"
)

// Reconnect backoff: after a stream ends, the client waits
// backoff(reconnectBase, reconnectMax, attempt, r) before dialing again,
// attempt counting the streams since the last one that reached SyncDone.
const (
	// reconnectBase is the step of the first retry (before jitter).
	reconnectBase = time.Second
	// reconnectMax caps the step: an edge cluster whose hub is away for
	// hours still tries every 15–30 s, and reaches a restarted hub within
	// the start-up grace the hub gives it (protocol.MaxReconnectDelay).
	reconnectMax = protocol.MaxReconnectDelay
	// maxRetryAfter caps a hub's Goodbye.retry_after, so a wrong value
	// cannot park an agent for days.
	maxRetryAfter = 15 * time.Minute
)

// Apply retry backoff: a work whose apply failed (or conflicted) is applied
// again after backoff(applyRetryBase, applyRetryMax, failures-1, r).
const (
	// applyRetryBase is the step of the first apply retry.
	applyRetryBase = 5 * time.Second
	// applyRetryMax caps the step between apply retries.
	applyRetryMax = 5 * time.Minute
)

// backoff returns the delay before retry number attempt (0 for the first):
// the step base·2^attempt, capped at max, with "equal jitter": the delay is
// drawn uniformly from [step/2, step) by r in [0, 1). Agents of many
// clusters that lost the same hub spread their reconnects, and each still
// waits at least half its step.
func backoff(base, max time.Duration, attempt int, r float64) time.Duration {
	step := max
	if attempt < 32 { // beyond, the shift overflows; the cap applies anyway
		if s := base << uint(attempt); s > 0 && s < max {
			step = s
		}
	}
	if r < 0 || r >= 1 {
		r = 0
	}
	half := step / 2
	return half + time.Duration(r*float64(step-half))
}

// retryAfterDelay is the wait a Goodbye asked for, capped, with up to 10%
// added as jitter by r in [0, 1).
func retryAfterDelay(d time.Duration, r float64) time.Duration {
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	if r < 0 || r >= 1 {
		r = 0
	}
	return d + time.Duration(r*float64(d)/10)
}
