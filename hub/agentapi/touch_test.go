package agentapi_test

import (
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/pipeline/lease"
)

// TestHeldBackStreamsKeepLeases: a stream the hub holds back unread (its
// works not ready, as while a restarted hub's renderer rebuilds, or no
// place yet among the Hellos in progress) keeps its cluster's lease valid:
// 10,000 agents reconnecting at once took up to 48.6 s to be read and
// resynced, longer than a lease after the last heartbeat read on their
// previous streams. Only a valid lease is kept: one that ran out stays
// Unknown until a heartbeat.
func TestHeldBackStreamsKeepLeases(t *testing.T) {
	h := startHub(t, agentapi.Config{HeartbeatInterval: 20 * time.Millisecond})
	h.leases.Heartbeat("edge-1", &agentv1.Heartbeat{}) // leases from before the streams
	h.leases.Heartbeat("edge-2", &agentv1.Heartbeat{})
	h.works.NotReady()
	h.clock.Advance(30 * time.Second)
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	touched := func() bool {
		l, _ := h.leases.Get("edge-1")
		return l.LastHeartbeat.Equal(h.clock.Now())
	}
	eventually(t, "edge-1's lease kept while its stream waits", touched)

	h.clock.Advance(30 * time.Second) // a minute since either lease was renewed
	eventually(t, "edge-2's lease run out", func() bool {
		l, _ := h.leases.Get("edge-2")
		return l.State == lease.StateUnknown
	})
	eventually(t, "edge-1's lease kept again", touched)
	if l, _ := h.leases.Get("edge-1"); l.State != lease.StateReady {
		t.Errorf("lease of edge-1, whose stream waits, = %s; want Ready", l.State)
	}

	b := h.connect(t, "edge-2", &agentv1.Hello{}) // back, but its lease ran out
	h.clock.Advance(time.Second)
	time.Sleep(100 * time.Millisecond) // five touches' worth
	if l, _ := h.leases.Get("edge-2"); l.State != lease.StateUnknown {
		t.Errorf("lease of edge-2 after its waiting stream touched it = %s; want Unknown until a heartbeat", l.State)
	}

	h.works.SetReady()
	a.expect("welcome "+hubIdentity, "syncdone 0")
	b.expect("welcome "+hubIdentity, "syncdone 0")
}
