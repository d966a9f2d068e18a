package security

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Bounds of the agent message floods.
const (
	// floodMax is the most messages one flood sends: past the default
	// burst of acks and status reports (20,000, twice the default
	// --max-works-per-cluster) with the sustained rate (5,000 a second)
	// to spare when the hub reads faster than that.
	floodMax = 200000
	// floodFor bounds how long one flood sends.
	floodFor = 15 * time.Second
	// floodGrowthMiB bounds the growth of the hub's RSS a flood that the
	// hub reads without ending may cause, MiB.
	floodGrowthMiB = 256
)

// agentFloods: the hostile agent sends one kind of message flat out on one
// stream. Past the kind's rate (hub/agentapi MessageRates, the defaults)
// the stream ends ResourceExhausted naming the kind; a hub that cannot
// read acks or status reports as fast as their rate serves them all, its
// memory bounded. Certificate renewals carry a CSR that is not one: the
// rate is checked before the content, and a valid one would replace the
// hostile cluster's certificate that later attacks use.
func agentFloods() []attack {
	ack := func(i int) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
			WorkKey: fmt.Sprintf("v1/ConfigMap/default/flood-%d", i), Version: "v1", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}}}
	}
	report := func(i int) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
			WorkKey: fmt.Sprintf("v1/ConfigMap/default/flood-%d", i), Version: "v1"}}}
	}
	beat := func(i int) *agentv1.AgentMessage { return heartbeat(fmt.Sprintf("flood-%d", i)) }
	renewal := func(int) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{
			CsrPem: []byte("not a CSR")}}}
	}
	custAck := func(i int) *agentv1.AgentMessage {
		return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
			Version: fmt.Sprint(i)}}}
	}
	flood := func(kind string, msg func(int) *agentv1.AgentMessage) attack {
		return attack{"agent floods " + kind + "s", func(t *testing.T, e *hostileEnv) string { return e.floodKind(t, kind, msg) }}
	}
	return []attack{
		flood("heartbeat", beat), flood("ack", ack), flood("status report", report),
		flood("certificate renewal", renewal), flood("customizations ack", custAck),
	}
}

// floodKind opens the hostile cluster's stream and sends msg(0), msg(1),
// … until the hub ends the stream, floodMax are sent or floodFor has
// passed. An ended stream must be ResourceExhausted naming kind; one the
// hub still serves must have cost it at most floodGrowthMiB.
func (e *hostileEnv) floodKind(t *testing.T, kind string, msg func(int) *agentv1.AgentMessage) string {
	before, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStream(t, e.h, e.hostile)
	if err != nil {
		t.Fatalf("open the hostile cluster's stream: %v", err)
	}
	defer s.cancel()
	start := time.Now()
	sent := 0
	for ; sent < floodMax && time.Since(start) < floodFor; sent++ {
		if err := s.send(msg(sent)); err != nil {
			break // the hub ended the stream; ended says how
		}
	}
	took := time.Since(start)
	rate := float64(sent) / took.Seconds()
	bye, err, ended := s.ended(servingWait)
	if !ended {
		after, _, merr := procMemory(e.h.p.PID())
		if merr != nil {
			t.Fatal(merr)
		}
		if grown := (after - before) / 1024; grown > floodGrowthMiB {
			t.Errorf("%d %ss served at %.0f/s grew the hub by %d MiB; want at most %d", sent, kind, rate, grown, floodGrowthMiB)
		}
		return fmt.Sprintf("contained: %d %ss in %.1f s (%.0f/s, under the rate) all served, hub +%d MiB",
			sent, kind, took.Seconds(), rate, (after-before)/1024)
	}
	want := fmt.Sprintf("%s messages faster than the hub accepts", kind)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Fatalf("flood of %ss ended with %v (goodbye %v); want ResourceExhausted saying %q", kind, err, bye, want)
	}
	t.Logf("%s flood: %d sent in %s: %v", kind, sent, took.Round(time.Millisecond), err)
	return fmt.Sprintf("refused ResourceExhausted after %d %ss (%.0f/s)", sent, kind, rate)
}

// hugeHeartbeats: after a heartbeat listing apps/v1, the hostile cluster
// sends one past a bound of HeartbeatLimits: 10,001 API entries, or more
// than 512 KiB encoded. The stream ends ResourceExhausted; the cluster is
// not made Unknown and its API list in GetCluster is still the one before:
// nothing of the huge heartbeat is held or written.
func hugeHeartbeats() []attack {
	entries := &agentv1.APIEnablement{GroupVersion: "example.com/v1"}
	for i := range 10000 {
		entries.Resources = append(entries.Resources, &agentv1.APIResource{Name: fmt.Sprintf("r%d", i), Kind: fmt.Sprintf("K%d", i)})
	}
	bytes := &agentv1.APIEnablement{GroupVersion: "example.com/v1"}
	for i := range 110 {
		bytes.Resources = append(bytes.Resources, &agentv1.APIResource{Name: fmt.Sprintf("r%d-%s", i, strings.Repeat("x", 5000)), Kind: "K"})
	}
	return []attack{
		{"heartbeat with 10,001 API entries", func(t *testing.T, e *hostileEnv) string {
			return e.hugeHeartbeat(t, entries, "10001 API entries")
		}},
		{"heartbeat of more than 512 KiB", func(t *testing.T, e *hostileEnv) string {
			return e.hugeHeartbeat(t, bytes, "bytes encoded, more than 524288")
		}},
	}
}

func (e *hostileEnv) hugeHeartbeat(t *testing.T, huge *agentv1.APIEnablement, want string) string {
	s, err := openStream(t, e.h, e.hostile)
	if err != nil {
		t.Fatalf("open the hostile cluster's stream: %v", err)
	}
	defer s.cancel()
	if err := s.heartbeat(); err != nil {
		t.Fatal(err)
	}
	clusters := hubv1.NewClusterServiceClient(e.admin)
	poll(t, servingWait, "the hostile cluster's heartbeat read", func() (bool, string) {
		resp, err := clusters.GetCluster(rpcCtx(t), &hubv1.GetClusterRequest{Name: hostileCluster})
		return err == nil && resp.GetCluster().GetAgentVersion() == "security-test" && len(resp.GetApiEnablements()) == 1, fmt.Sprint(resp, err)
	})
	hb := &agentv1.Heartbeat{AgentVersion: "huge", ApiEnablements: []*agentv1.APIEnablement{huge},
		Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}}}
	_ = s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: hb}})
	bye, err, ended := s.ended(servingWait)
	if !ended {
		t.Fatalf("the stream that sent a huge heartbeat still open after %s; want it ended", servingWait)
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), want) {
		t.Fatalf("huge heartbeat: stream ended %v (goodbye %v); want ResourceExhausted saying %q", err, bye, want)
	}
	resp, err := clusters.GetCluster(rpcCtx(t), &hubv1.GetClusterRequest{Name: hostileCluster})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.GetCluster()
	if c.GetState() == hubv1.ClusterState_CLUSTER_STATE_UNKNOWN || c.GetAgentVersion() != "security-test" {
		t.Errorf("after a huge heartbeat the cluster is %s, agent version %q; want its state and heartbeat of before", c.GetState(), c.GetAgentVersion())
	}
	if apis := resp.GetApiEnablements(); len(apis) != 1 || apis[0].GetGroupVersion() != "apps/v1" {
		t.Errorf("after a huge heartbeat the cluster's APIs are %d group versions (%.200v); want apps/v1 only, as before", len(apis), apis)
	}
	return fmt.Sprintf("refused ResourceExhausted; cluster still %s with its API list of before", strings.TrimPrefix(c.GetState().String(), "CLUSTER_STATE_"))
}
