package agentapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/internal/protocol"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// expectEnd receives a Goodbye for reason, then the stream's end with code
// and a message containing msg.
func (a *agent) expectEnd(reason string, code codes.Code, msg string) {
	a.t.Helper()
	a.expect("goodbye " + reason)
	_, err := a.stream.Recv()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msg) {
		a.t.Errorf("stream ended with %v; want %s with %q", err, code, msg)
	}
}

func TestProtocolAndLimitViolationsEndTheStreamClearly(t *testing.T) {
	// Only "no Hello in time" may meet a Hello timeout: on a slow machine
	// a short one would end the other cases' streams before they speak.
	h := startHub(t, agentapi.Config{MaxWorks: 3, MaxMessageBytes: 64 << 10, HelloTimeout: time.Hour})
	huge := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
		WorkKey: "a", Version: "1", Manifests: []*agentv1.ManifestStatus{{StatusJson: make([]byte, 100<<10)}},
	}}}

	t.Run("first message not Hello", func(t *testing.T) {
		a := h.connect(t, "edge-1", nil)
		a.send(heartbeat())
		a.expectEnd("DISCONNECT_REASON_PROTOCOL_ERROR", codes.InvalidArgument, "first message on a stream must be Hello")
	})
	t.Run("no Hello in time", func(t *testing.T) {
		h := startHub(t, agentapi.Config{HelloTimeout: 200 * time.Millisecond})
		a := h.connect(t, "edge-1", nil)
		a.expectEnd("DISCONNECT_REASON_PROTOCOL_ERROR", codes.InvalidArgument, "no Hello within 200ms")
	})
	t.Run("second Hello", func(t *testing.T) {
		a := h.connect(t, "edge-1", &agentv1.Hello{})
		a.expect("welcome "+hubIdentity, "syncdone 0")
		a.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{}}})
		a.expectEnd("DISCONNECT_REASON_PROTOCOL_ERROR", codes.InvalidArgument, "Hello is allowed only as the first message")
	})
	t.Run("message over the size limit", func(t *testing.T) {
		a := h.connect(t, "edge-1", &agentv1.Hello{})
		a.expect("welcome "+hubIdentity, "syncdone 0")
		a.send(huge)
		// gRPC itself ends the stream before the service sees the message,
		// so there is no Goodbye; the status says which limit.
		_, err := a.stream.Recv()
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "larger than max (102418 vs. 65536)") {
			t.Errorf("stream after a message over the limit = %v; want ResourceExhausted naming the sizes", err)
		}
	})
	// Too many works withhold the excess; they never end the stream,
	// which carries the cluster's heartbeats (works_test.go).
	t.Run("certificate renewal without a registry is refused, the stream goes on", func(t *testing.T) {
		a := h.connect(t, "edge-1", &agentv1.Hello{})
		a.expect("welcome "+hubIdentity, "syncdone 0")
		a.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{}}})
		a.expect("renewed agentapi: not implemented: this hub has no registry to renew certificates with; mint a new one with `tether-hub mint-agent`")
		h.works.Set(edge1, work("after", "1"))
		a.expect("upsert after@1")
	})
}

func TestFailingDependenciesEndTheStreamUnavailable(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"))
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")
	h.statuses.Fail(errTest)
	a.send(statusMsg("a", "1", "d"))
	if _, err := a.stream.Recv(); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "record status of work") {
		t.Errorf("stream after a failing status sink = %v; want Unavailable", err)
	}
	h.statuses.Fail(nil)
	h.works.Fail(errTest)
	b := h.connect(t, "edge-1", &agentv1.Hello{})
	if _, err := b.stream.Recv(); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "read the works") {
		t.Errorf("Connect with failing works = %v; want Unavailable", err)
	}
}

var errTest = errorString("injected failure")

type errorString string

func (e errorString) Error() string { return string(e) }

// TestStatusesPastTheirClusterLimitEndOnlyThatStream: a status sink that
// refuses a cluster's report for a limit of that cluster (the aggregator's
// per-cluster relay queue) ends its stream with Goodbye LIMIT_EXCEEDED,
// asking it to wait a heartbeat interval, and ResourceExhausted naming the
// limit, not Unavailable.
func TestStatusesPastTheirClusterLimitEndOnlyThatStream(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"))
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")
	h.statuses.Fail(fmt.Errorf("%w: cluster relay queue full: cluster %q", agentapi.ErrLimit, "edge-1"))
	a.send(statusMsg("a", "1", "d"))
	m := a.recv()
	if g := m.GetGoodbye(); g.GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_LIMIT_EXCEEDED || g.GetRetryAfter().AsDuration() != protocol.HeartbeatInterval {
		t.Errorf("first message after the refused report: %s; want Goodbye LIMIT_EXCEEDED, retry after %s", describe(m), protocol.HeartbeatInterval)
	}
	if _, err := a.stream.Recv(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "cluster relay queue full") {
		t.Errorf("stream after a status sink past its cluster's limit = %v; want ResourceExhausted naming the limit", err)
	}
}

// TestReconnectLoopRefusedAlone: a cluster opening streams in a tight loop
// is refused past its burst with Goodbye LIMIT_EXCEEDED, a retry-after of
// one over the rate, and ResourceExhausted naming the limit, counted;
// another cluster connects meanwhile as usual.
func TestReconnectLoopRefusedAlone(t *testing.T) {
	counts := guard.NewCounts()
	h := startHub(t, agentapi.Config{StreamOpenRate: 0.5, StreamOpenBurst: 3, Counts: counts})
	for range 3 {
		a := h.connect(t, "edge-1", &agentv1.Hello{})
		a.expect("welcome "+hubIdentity, "syncdone 0")
		a.cancel()
	}
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	m := a.recv()
	if g := m.GetGoodbye(); g.GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_LIMIT_EXCEEDED || g.GetRetryAfter().AsDuration() != 2*time.Second {
		t.Errorf("fourth stream of edge-1 at once: %s; want Goodbye LIMIT_EXCEEDED, retry after 2s", describe(m))
	}
	if _, err := a.stream.Recv(); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), `stream open rate limit: cluster "edge-1"`) {
		t.Errorf("fourth stream of edge-1 = %v; want ResourceExhausted naming the stream open rate limit", err)
	}
	if n := counts.Get("agentapi", agentapi.KindStreamOpenLimit); n != 1 {
		t.Errorf("%s counted %d; want 1", agentapi.KindStreamOpenLimit, n)
	}
	b := h.connect(t, "edge-2", &agentv1.Hello{})
	b.expect("welcome "+hubIdentity, "syncdone 0")
}
