package hubclient

import (
	"time"

	"github.com/tetherproj/tether/internal/backoff"
	"github.com/tetherproj/tether/internal/protocol"
)

// reconnect is the backoff after a stream ends: the client waits
// reconnect.Delay(attempt) before dialing again, attempt counting the
// streams since the last one that reached SyncDone. The step starts at
// 1 s; its cap, protocol.MaxReconnectDelay, keeps an edge cluster whose
// hub is away for hours trying every 15–30 s, so that it reaches a
// restarted hub within the start-up grace the hub gives it. Jittered:
// agents of many clusters that lost the same hub spread their reconnects.
var reconnect = backoff.Policy{Base: time.Second, Max: protocol.MaxReconnectDelay, Jitter: true}

// applyRetry is the backoff of a work whose apply failed (or conflicted),
// or whose record could not be written: it is tried again after
// applyRetry.Delay(failures-1), from 5 s up to 5 min.
var applyRetry = backoff.Policy{Base: 5 * time.Second, Max: 5 * time.Minute, Jitter: true}

// maxRetryAfter caps a hub's Goodbye.retry_after, so a wrong value cannot
// park an agent for days.
const maxRetryAfter = 15 * time.Minute

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
