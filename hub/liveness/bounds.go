package liveness

import (
	"errors"
	"fmt"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"
)

// Defaults of HeartbeatLimits: what one heartbeat may hold, which the hub
// keeps in memory and writes to etcd (DESIGN §8: every input is bounded).
const (
	// DefaultMaxHeartbeatBytes is the largest heartbeat, protobuf-encoded,
	// in bytes: 512 KiB, several times the heartbeat of a member serving
	// thousands of CRDs (about 50 bytes per resource), and, once encoded
	// in its record (a third larger), well under etcd's default request
	// limit of 1.5 MiB.
	DefaultMaxHeartbeatBytes = 512 << 10
	// DefaultMaxAPIEntries is the most API entries (group versions plus
	// the resources under them) one heartbeat may list: a member with
	// every upstream API and 2,000 CRDs lists about 3,000.
	DefaultMaxAPIEntries = 10000
)

// ErrHeartbeatTooLarge: a heartbeat past HeartbeatLimits, which the hub
// neither holds nor writes.
var ErrHeartbeatTooLarge = errors.New("liveness: heartbeat too large")

// HeartbeatLimits bounds one heartbeat; zero fields mean the defaults.
type HeartbeatLimits struct {
	// MaxBytes bounds the protobuf-encoded heartbeat, bytes.
	MaxBytes int
	// MaxAPIEntries bounds its group versions plus their resources.
	MaxAPIEntries int
}

func (b HeartbeatLimits) withDefaults() HeartbeatLimits {
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMaxHeartbeatBytes
	}
	if b.MaxAPIEntries <= 0 {
		b.MaxAPIEntries = DefaultMaxAPIEntries
	}
	return b
}

// Check says why hb is past b (an error wrapping ErrHeartbeatTooLarge and
// naming the bound), or returns nil.
func (b HeartbeatLimits) Check(hb *agentv1.Heartbeat) error {
	b = b.withDefaults()
	entries := len(hb.GetApiEnablements())
	for _, e := range hb.GetApiEnablements() {
		entries += len(e.GetResources())
	}
	if entries > b.MaxAPIEntries {
		return fmt.Errorf("%w: %d API entries (group versions and resources), more than %d", ErrHeartbeatTooLarge, entries, b.MaxAPIEntries)
	}
	if n := proto.Size(hb); n > b.MaxBytes {
		return fmt.Errorf("%w: %d bytes encoded, more than %d", ErrHeartbeatTooLarge, n, b.MaxBytes)
	}
	return nil
}
