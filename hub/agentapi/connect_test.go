package agentapi_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/internal/protocol"
)

var edge1 = []string{"edge-1"}

func TestEmptyHelloGetsWelcomeEveryWorkThenSyncDone(t *testing.T) {
	h := startHub(t, agentapi.Config{HubVersion: "v-test", MaxWorks: 50})
	h.works.Set(edge1, work("b", "1"), work("a", "1"))
	h.works.Set([]string{"edge-2"}, work("other", "1")) // never reaches edge-1

	a := h.connect(t, "edge-1", &agentv1.Hello{})
	welcome := a.recv().GetWelcome()
	if welcome.GetHubIdentity() != hubIdentity || welcome.GetHubVersion() != "v-test" {
		t.Errorf("Welcome = %v; want hub identity %s, version v-test", welcome, hubIdentity)
	}
	s := welcome.GetSettings()
	if s.GetLeaseDuration().AsDuration() != protocol.LeaseDuration || s.GetLimits().GetMaxWorks() != 50 ||
		s.GetLimits().GetMaxMessageBytes() != agentapi.DefaultMaxMessageBytes || s.GetHeartbeatInterval().AsDuration() != protocol.HeartbeatInterval {
		t.Errorf("Welcome settings = %v; want the defaults with max_works 50", s)
	}
	a.expect("upsert a@1", "upsert b@1", "syncdone 2")
	h.works.Set(edge1, work("sentinel", "1"))
	a.expect("upsert sentinel@1") // the very next message: nothing else was queued
}

func TestChangesAfterSyncArriveOneByOne(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"), work("b", "1"))
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "upsert a@1", "upsert b@1", "syncdone 2")

	h.works.Set(edge1, work("a", "2"))
	a.expect("upsert a@2")
	h.works.Remove("edge-1", "b")
	a.expect("delete b DELETION_POLICY_DELETE")
	h.works.Set(edge1, work("c", "1"))
	a.expect("upsert c@1") // and nothing for b or a in between
}

func TestReconnectGetsOnlyTheDifference(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("cur", "1"), work("stale", "2"), work("new", "1"), work("gone", "1"))
	h.works.Remove("edge-1", "gone")
	tests := []struct {
		name  string
		hello *agentv1.Hello
		want  []string
	}{
		{
			name:  "same hub",
			hello: held(hubIdentity, "cur", "1", "stale", "1", "gone", "1", "unknown", "1"),
			want:  []string{"upsert new@1", "upsert stale@2", "delete gone DELETION_POLICY_DELETE", "syncdone 3"},
		},
		{
			name:  "another hub identity sends everything and deletes nothing",
			hello: held("another-hub", "cur", "1", "stale", "1", "gone", "1", "unknown", "1"),
			want:  []string{"upsert cur@1", "upsert new@1", "upsert stale@2", "syncdone 3"},
		},
		{
			name:  "agent holds everything current",
			hello: held(hubIdentity, "cur", "1", "stale", "2", "new", "1"),
			want:  []string{"syncdone 3"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := h.connect(t, "edge-1", tt.hello)
			a.expect(append([]string{"welcome " + hubIdentity}, tt.want...)...)
			// a sentinel change: it must be the very next message, so
			// nothing else was sent after SyncDone
			sentinel := "sentinel-" + string(rune('a'+i))
			h.works.Set(edge1, work(sentinel, "1"))
			a.expect("upsert " + sentinel + "@1")
			h.works.Remove("edge-1", sentinel)
			a.expect("delete " + sentinel + " DELETION_POLICY_DELETE")
		})
	}
}

func TestReconnectAsksForMissingStatuses(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"), work("b", "1"))
	h.statuses.SetDigest("edge-1", "a", syncstate.Digest{Version: "1", Digest: "d-a"})
	hello := held(hubIdentity, "a", "1", "b", "1")
	hello.ReportedStatuses = []*agentv1.ReportedStatus{
		{WorkKey: "a", Version: "1", StatusDigest: "d-a"},
		{WorkKey: "b", Version: "1", StatusDigest: "d-b"},
	}
	a := h.connect(t, "edge-1", hello)
	a.expect("welcome "+hubIdentity, "syncdone 2", "status b")
}

// slowWindow is the flow-control window of the slow agent: small, and fixed
// (a window given disables gRPC's BDP growth).
const slowWindow = 64 << 10

func TestSlowAgentGetsTheLatestVersionNotABacklog(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("hot", "0"))
	a := h.connect(t, "edge-1", &agentv1.Hello{}, slowClient()...)
	a.expect("welcome "+hubIdentity, "upsert hot@0", "syncdone 1")

	const versions = 300
	big := strings.Repeat("x", 32<<10) // 300 versions × 32 KiB: far over the window
	for v := 1; v <= versions; v++ {
		w := work("hot", itoa(v))
		w.Manifests = [][]byte{[]byte(big)}
		h.works.Set(edge1, w) // the agent reads nothing meanwhile
	}
	h.works.Set(edge1, work("marker", "1"))
	var got []string
	for {
		m := a.recv().GetWorkUpsert()
		if m.GetWorkKey() == "marker" {
			break
		}
		got = append(got, m.GetVersion())
	}
	if len(got) == 0 || got[len(got)-1] != itoa(versions) {
		t.Fatalf("versions received = %v; want the last to be %d", got, versions)
	}
	if len(got) > 10 {
		t.Errorf("received %d versions of one work (%v); want the latest and at most what was in flight", len(got), got)
	}
	t.Logf("of %d versions the slow agent received %d: %v", versions, len(got), got)
}

// TestQueuedWorkSentInItsLatestVersion: a work still queued for a slow
// agent when it changes goes out once, in its new version: the stream
// takes the works' changes before each message it sends, not only once
// its queue is empty.
func TestQueuedWorkSentInItsLatestVersion(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	big := strings.Repeat("x", 32<<10) // 20 works × 32 KiB: far over the window
	var works []*agentv1.WorkUpsert
	for i := range 20 {
		w := work(fmt.Sprintf("w%02d", i), "1")
		w.Manifests = [][]byte{[]byte(big)}
		works = append(works, w)
	}
	h.works.Set(edge1, works...)
	a := h.connect(t, "edge-1", &agentv1.Hello{}, slowClient()...)
	if got := describe(a.recv()); got != "welcome "+hubIdentity {
		t.Fatalf("first message %s; want Welcome", got)
	}
	a.recv() // the first work: the hub's send loop is now blocked on the window
	h.works.Set(edge1, work("w19", "2"))
	var got []string
	for {
		m := a.recv()
		if m.GetSyncDone() != nil {
			continue
		}
		up := m.GetWorkUpsert()
		if up.GetWorkKey() == "w19" {
			got = append(got, up.GetVersion())
		}
		if len(got) > 0 && got[len(got)-1] == "2" {
			break
		}
	}
	if len(got) != 1 {
		t.Errorf("w19 was sent in versions %v; want once, in version 2", got)
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

func TestAcksAndStatusReachTheSinksWithTheCertificateCluster(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"))
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")

	a.send(ackMsg("a", "1"))
	a.send(statusMsg("a", "1", "d1"))
	eventually(t, "the ack and status of a@1", func() bool {
		acks, reports, _ := h.statuses.Recorded()
		return len(acks) == 1 && len(reports) == 1
	})
	h.works.Set(edge1, work("a", "2"))
	a.expect("upsert a@2")
	a.send(ackMsg("a", "1"))          // stale: discarded
	a.send(statusMsg("a", "1", "d1")) // stale: discarded
	a.send(statusMsg("a", "2", "d2"))
	eventually(t, "the status of a@2", func() bool {
		_, reports, _ := h.statuses.Recorded()
		return len(reports) >= 2
	})
	acks, reports, _ := h.statuses.Recorded()
	var got []string
	for _, r := range acks {
		got = append(got, "ack "+r.Cluster+" "+r.Ack.GetWorkKey()+"@"+r.Ack.GetVersion())
	}
	for _, r := range reports {
		got = append(got, "status "+r.Cluster+" "+r.Report.GetWorkKey()+"@"+r.Report.GetVersion())
	}
	want := "ack edge-1 a@1|status edge-1 a@1|status edge-1 a@2"
	if strings.Join(got, "|") != want {
		t.Errorf("recorded %s; want %s", strings.Join(got, "|"), want)
	}
}

func ackMsg(key, version string) *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: key, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED,
	}}}
}

func statusMsg(key, version, digest string) *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
		WorkKey: key, Version: version, Digest: digest,
	}}}
}

func heartbeat() *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"cpu": "8"}},
	}}}
}

func TestHeartbeatsKeepTheLeaseAndItRunsOut(t *testing.T) {
	h := startHub(t, agentapi.Config{LeaseDuration: 40 * time.Second})
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "syncdone 0")
	a.send(heartbeat())
	waitLease(t, h, "edge-1", "Ready")
	h.clock.Advance(30 * time.Second)
	a.send(heartbeat())
	eventually(t, "the second heartbeat", func() bool {
		l, _ := h.leases.Get("edge-1")
		return l.LastHeartbeat.Equal(t0.Add(30 * time.Second))
	})
	h.clock.Advance(30 * time.Second) // 60 s: 30 s after the last heartbeat
	if l, _ := h.leases.Get("edge-1"); l.State != "Ready" {
		t.Errorf("lease 30s after a heartbeat = %s; want Ready", l.State)
	}
	h.clock.Advance(11 * time.Second) // 71 s: 41 s after it
	// Unknown since the hub saw the lease run out (71 s), not since 70 s.
	if l := waitLease(t, h, "edge-1", "Unknown"); !l.Since.Equal(t0.Add(71*time.Second)) || l.Heartbeat.GetResourceSummary().GetAllocatable()["cpu"] != "8" {
		t.Errorf("lease = %s since %s, capacity %v; want Unknown since 71s, cpu 8", l.State, l.Since.Sub(t0), l.Heartbeat.GetResourceSummary())
	}
}

func waitLease(t *testing.T, h *hub, cluster, state string) leaseView {
	t.Helper()
	var got leaseView
	eventually(t, "lease "+state, func() bool {
		l, _ := h.leases.Get(cluster)
		got = l
		return string(l.State) == state
	})
	return got
}

func TestSecondStreamSupersedesTheFirst(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	h.works.Set(edge1, work("a", "1"))
	first := h.connect(t, "edge-1", &agentv1.Hello{})
	first.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")
	second := h.connect(t, "edge-1", held(hubIdentity, "a", "1"))
	second.expect("welcome "+hubIdentity, "syncdone 1")
	first.expect("goodbye DISCONNECT_REASON_SUPERSEDED")
	if _, err := first.stream.Recv(); status.Code(err) != codes.Aborted {
		t.Errorf("first stream ended with %v; want Aborted", err)
	}
	eventually(t, "one live stream", func() bool { return h.srv.Streams() == 1 })
	h.works.Set(edge1, work("a", "2"))
	second.expect("upsert a@2")
}

func TestCloseSaysGoodbye(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "syncdone 0")
	idle := h.connect(t, "edge-2", nil) // no Hello yet
	if err := h.srv.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	a.expect("goodbye DISCONNECT_REASON_SHUTDOWN")
	idle.expect("goodbye DISCONNECT_REASON_SHUTDOWN")
	if _, err := a.stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("stream after Close ended with %v; want Unavailable", err)
	}
	late := h.connect(t, "edge-3", &agentv1.Hello{})
	late.expect("goodbye DISCONNECT_REASON_SHUTDOWN")
	if _, err := late.stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("Connect after Close = %v; want Unavailable", err)
	}
}

// TestSuspendSaysGoodbyeUntilResumed: a suspended replica (its store out
// of reach) ends its streams and refuses new ones with Goodbye SHUTDOWN,
// saying why, and serves again once resumed.
func TestSuspendSaysGoodbyeUntilResumed(t *testing.T) {
	h := startHub(t, agentapi.Config{})
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "syncdone 0")
	h.srv.Suspend("store unreachable for 10s")
	msg, err := a.stream.Recv()
	if err != nil || msg.GetGoodbye().GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN ||
		!strings.Contains(msg.GetGoodbye().GetMessage(), "store unreachable") {
		t.Fatalf("stream after Suspend: %v, %v; want Goodbye SHUTDOWN naming the store", msg, err)
	}
	late := h.connect(t, "edge-2", &agentv1.Hello{})
	late.expect("goodbye DISCONNECT_REASON_SHUTDOWN")
	h.srv.Resume()
	again := h.connect(t, "edge-1", &agentv1.Hello{})
	again.expect("welcome "+hubIdentity, "syncdone 0")
}

// received counts the messages a gRPC server has read and decoded.
type received struct{ n atomic.Int64 }

func (r *received) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (r *received) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (r *received) HandleConn(context.Context, stats.ConnStats)                       {}
func (r *received) HandleRPC(_ context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.InPayload); ok {
		r.n.Add(1)
	}
}

// TestHelloReadOnceWorksReady: while the works cannot be read yet (a
// restarted hub's renderer rebuilding), a stream leaves its agent's Hello
// unread in the transport (a fleet reconnecting at once would otherwise
// hold every Hello decoded meanwhile), and once they can, it reads it and
// starts; the Hello timeout runs from then, not from the connection.
func TestHelloReadOnceWorksReady(t *testing.T) {
	var got received
	h := startHub(t, agentapi.Config{HelloTimeout: 500 * time.Millisecond}, grpc.StatsHandler(&got))
	h.works.Set(edge1, work("a", "1"))
	h.works.NotReady()
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	time.Sleep(time.Second) // past the Hello timeout, too
	if n := got.n.Load(); n != 0 {
		t.Fatalf("the hub read %d messages while its works were not ready; want none", n)
	}
	h.works.SetReady()
	a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")
	if n := got.n.Load(); n != 1 {
		t.Errorf("the hub read %d messages; want the Hello", n)
	}
}

// TestHellosReadAFewAtATime: at most Config.MaxHellosInProgress streams
// read and act on their Hello at once, so that a fleet reconnecting to a
// restarted hub does not have every Hello decoded before the first is
// done with; a stream that holds its place too long (here: its works are
// slow to read) gives it up after a while, and the others go on.
func TestHellosReadAFewAtATime(t *testing.T) {
	var got received
	h := startHub(t, agentapi.Config{MaxHellosInProgress: 1}, grpc.StatsHandler(&got))
	release := h.works.HoldCurrent()
	defer release()
	var agents []*agent
	for i := range 3 {
		agents = append(agents, h.connect(t, fmt.Sprintf("edge-%d", i), &agentv1.Hello{}))
	}
	eventually(t, "a first Hello read", func() bool { return got.n.Load() >= 1 })
	time.Sleep(500 * time.Millisecond)
	if n := got.n.Load(); n != 1 {
		t.Fatalf("%d Hellos read while the first stream was still starting; want 1", n)
	}
	eventually(t, "every Hello read once the first stream held its place too long", func() bool { return got.n.Load() == 3 })
	release()
	for _, a := range agents {
		a.expect("welcome "+hubIdentity, "syncdone 0")
	}
}
