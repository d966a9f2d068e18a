package protocol

import "testing"

// TestContract checks the relations between the timings that hub and
// agent rely on.
func TestContract(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a lease outlasts two heartbeats, so one lost heartbeat never expires it", LeaseDuration >= 2*HeartbeatInterval},
		{"the hub tolerates the agent's pings", KeepaliveMinTime <= KeepaliveTime},
		{"an agent tries again within one lease", MaxReconnectDelay < LeaseDuration},
	} {
		if !tc.ok {
			t.Errorf("%s: does not hold (HeartbeatInterval %s, LeaseDuration %s, KeepaliveTime %s, KeepaliveMinTime %s, MaxReconnectDelay %s)",
				tc.name, HeartbeatInterval, LeaseDuration, KeepaliveTime, KeepaliveMinTime, MaxReconnectDelay)
		}
	}
}
