// Package protocol holds the timing contract of the agent protocol that hub
// and agent both rely on, so the two sides cannot drift apart. It imports
// only the standard library.
package protocol

import "time"

// MaxReconnectDelay is the longest an agent waits between two attempts to
// reach its hub (its reconnect backoff step is capped here, before jitter).
// A restarted hub keeps clusters it has not heard from yet as they were for
// its lease duration plus this delay, so that an agent whose hub was away
// for a long time reconnects before the hub would declare its cluster
// unreachable and fail its work over.
const MaxReconnectDelay = 30 * time.Second
