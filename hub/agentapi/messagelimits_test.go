package agentapi_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/internal/protocol"
)

// maxFlood bounds how many messages a flooding test agent sends before
// the test gives up on the hub ending its stream.
const maxFlood = 200000

// flood sends m until the hub ends the stream (Send returns io.EOF) and
// returns how many it sent; it fails the test if the hub never does.
func (a *agent) flood(m *agentv1.AgentMessage) int {
	a.t.Helper()
	for i := range maxFlood {
		if err := a.stream.Send(m); err != nil {
			if !errors.Is(err, io.EOF) {
				a.t.Fatalf("Send: %v", err)
			}
			return i
		}
	}
	a.t.Fatalf("the hub took %d messages flat out without ending the stream", maxFlood)
	return maxFlood
}

// TestFloodingOneKindEndsOnlyThatStream: an agent that sends a kind of
// message flat out gets Goodbye LIMIT_EXCEEDED, asking it to wait until
// its burst has refilled (at most a heartbeat interval), and
// ResourceExhausted naming its cluster, the kind and the bound, counted;
// another cluster's stream
// meanwhile keeps getting its works and renewing its lease. Heartbeats run
// with the defaults; the other kinds with small bounds, so that the test
// does not depend on how fast the machine sends.
func TestFloodingOneKindEndsOnlyThatStream(t *testing.T) {
	tiny := agentapi.Rate{PerSecond: 1, Burst: 5}
	tests := []struct {
		name  string
		rates agentapi.MessageRates
		msg   *agentv1.AgentMessage
		want  string
		wait  time.Duration
	}{
		{"heartbeats, default bound", agentapi.MessageRates{}, heartbeat(),
			`cluster "edge-1" sent heartbeat messages faster than the hub accepts on one stream (at most 1 per second, bursts of 10)`, 10 * time.Second},
		{"acks", agentapi.MessageRates{Ack: tiny}, ackMsg("a", "0"),
			`cluster "edge-1" sent ack messages faster than the hub accepts on one stream (at most 1 per second, bursts of 5)`, 5 * time.Second},
		{"status reports", agentapi.MessageRates{StatusReport: tiny}, statusMsg("a", "0", "d"),
			`cluster "edge-1" sent status report messages faster than the hub accepts on one stream (at most 1 per second, bursts of 5)`, 5 * time.Second},
		{"certificate renewals", agentapi.MessageRates{CertificateRenewal: tiny},
			&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{}}},
			`cluster "edge-1" sent certificate renewal messages faster than the hub accepts on one stream (at most 1 per second, bursts of 5)`, 5 * time.Second},
		{"customizations acks", agentapi.MessageRates{CustomizationsAck: tiny},
			&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{Version: "v"}}},
			`cluster "edge-1" sent customizations ack messages faster than the hub accepts on one stream (at most 1 per second, bursts of 5)`, 5 * time.Second},
		{"customizations acks, default bound: the wait is at most a heartbeat interval", agentapi.MessageRates{},
			&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{Version: "v"}}},
			`cluster "edge-1" sent customizations ack messages faster than the hub accepts on one stream (at most 1 per second, bursts of 100)`, protocol.HeartbeatInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := guard.NewCounts()
			h := startHub(t, agentapi.Config{MessageRates: tt.rates, Counts: counts})
			h.works.Set(edge1, work("a", "1"))
			a := h.connect(t, "edge-1", &agentv1.Hello{})
			a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")
			b := h.connect(t, "edge-2", &agentv1.Hello{})
			b.expect("welcome "+hubIdentity, "syncdone 0")

			a.flood(tt.msg)
			m := a.recv()
			for ; m.GetGoodbye() == nil; m = a.recv() {
				if m.GetCertificateRenewed() == nil {
					t.Fatalf("received %s before the Goodbye; want only renewal answers", describe(m))
				}
			}
			if g := m.GetGoodbye(); g.GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_LIMIT_EXCEEDED || g.GetRetryAfter().AsDuration() != tt.wait {
				t.Errorf("Goodbye = %v; want LIMIT_EXCEEDED, retry after %s (the burst refilled)", g, tt.wait)
			}
			_, err := a.stream.Recv()
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), tt.want) {
				t.Errorf("flooded stream ended with %v; want ResourceExhausted with %q", err, tt.want)
			}
			if n := counts.Get("agentapi", agentapi.KindStreamLimit); n != 1 {
				t.Errorf("streams counted past a bound = %d; want 1", n)
			}

			h.works.Set([]string{"edge-2"}, work("b", "1"))
			b.expect("upsert b@1")
			b.send(heartbeat())
			eventually(t, "edge-2's lease", func() bool { _, ok := h.leases.Get("edge-2"); return ok })
		})
	}
}

// TestResyncOfEveryWorkStaysUnderTheDefaults: an agent that acks and
// reports every work of a full cluster at once, as after a reconnect,
// keeps its stream with the default bounds.
func TestResyncOfEveryWorkStaysUnderTheDefaults(t *testing.T) {
	const n = 1000
	h := startHub(t, agentapi.Config{MaxWorks: n + 1}) // and room for one more work
	var works []*agentv1.WorkUpsert
	for i := range n {
		works = append(works, work(fmt.Sprintf("w%04d", i), "1"))
	}
	h.works.Set(edge1, works...)
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	for range n + 2 { // Welcome, the works, SyncDone
		a.recv()
	}
	for _, w := range works {
		a.send(ackMsg(w.GetWorkKey(), "1"))
		a.send(statusMsg(w.GetWorkKey(), "1", "d"))
	}
	for range agentapi.DefaultHeartbeatBurst {
		a.send(heartbeat())
	}
	eventually(t, "every ack and report", func() bool {
		acks, reports, _ := h.statuses.Recorded()
		return len(acks) == n && len(reports) == n
	})
	h.works.Set(edge1, work("after", "1"))
	a.expect("upsert after@1")
}

// TestHeartbeatPastTheLeasesBoundsEndsTheStream: a heartbeat listing more
// API entries than hub/liveness holds (liveness.DefaultMaxAPIEntries) is
// not handed over; the stream ends with ResourceExhausted saying why.
func TestHeartbeatPastTheLeasesBoundsEndsTheStream(t *testing.T) {
	counts := guard.NewCounts()
	h := startHub(t, agentapi.Config{Counts: counts})
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "syncdone 0")
	e := &agentv1.APIEnablement{GroupVersion: "example.com/v1"}
	for i := range liveness.DefaultMaxAPIEntries {
		e.Resources = append(e.Resources, &agentv1.APIResource{Name: fmt.Sprintf("r%d", i), Kind: "R"})
	}
	a.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{ApiEnablements: []*agentv1.APIEnablement{e}}}})
	a.expectEnd("DISCONNECT_REASON_LIMIT_EXCEEDED", codes.ResourceExhausted,
		`cluster "edge-1" sent a heartbeat larger than the hub holds: liveness: heartbeat too large: 10001 API entries (group versions and resources), more than 10000`)
	if _, ok := h.leases.Get("edge-1"); ok {
		t.Error("the heartbeat past the bounds renewed a lease")
	}
	if n := counts.Get("agentapi", agentapi.KindStreamLimit); n != 1 {
		t.Errorf("streams counted past a bound = %d; want 1", n)
	}
}
