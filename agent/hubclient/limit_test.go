package hubclient_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// hubLimit is the max message size of the limited hub of these tests,
// bytes.
const hubLimit = 64 << 10

// maxManifestMessage mirrors hub/agentapi MaxManifestMessageBytes, the
// longest manifest message ValidateStatusReport accepts (agent/ never
// imports hub/).
const maxManifestMessage = 16 << 10

func limitedWelcome(id string) *agentv1.HubMessage {
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Welcome{Welcome: &agentv1.Welcome{
		HubIdentity: id, HubVersion: "hubtest",
		Settings: &agentv1.Settings{
			HeartbeatInterval: durationpb.New(beat),
			Limits:            &agentv1.Limits{MaxMessageBytes: hubLimit},
		},
	}}}
}

// TestOversizedReportKeepsTheStream: a status report larger than the hub's
// max message size (Settings.limits.max_message_bytes, which the hub
// enforces by ending the stream with RESOURCE_EXHAUSTED) is never sent; a
// small report saying how large it was goes instead, is counted, and the
// stream stays up (the agent used to send it, lose the stream and send it
// again on the next, about once a second for ever).
func TestOversizedReportKeepsTheStream(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.StartLimited(t, certs, "127.0.0.1:0", hubLimit)
	reg := prometheus.NewRegistry()
	a := startAgent(t, certs, hub.Addr, t.TempDir(), func(c *hubclient.Config) { c.Registerer = reg })
	s := hub.Next(t)
	s.Send(t, limitedWelcome(hubA), hubtest.Upsert("a", "v1"), hubtest.SyncDone(1))
	s.Recv(t, ackOf("a"))

	big := `{"data":"` + strings.Repeat("x", 2*hubLimit) + `"}`
	a.status.PushReport(&agentv1.StatusReport{WorkKey: "a", Version: "v1", Digest: "d1", Manifests: []*agentv1.ManifestStatus{{
		Identity: &agentv1.ObjectIdentity{Kind: "ConfigMap", Namespace: "default", Name: "a"},
		Health:   agentv1.Health_HEALTH_HEALTHY, Applied: true, StatusJson: []byte(big),
	}}})
	r := s.Recv(t, hubtest.Reports).GetStatusReport()
	if r.GetWorkKey() != "a" || r.GetVersion() != "v1" || r.GetDigest() != "d1" || len(r.GetManifests()) != 1 {
		t.Fatalf("report = %v; want work a v1 digest d1 with its one manifest", r)
	}
	m := r.GetManifests()[0]
	if len(m.GetStatusJson()) != 0 || m.GetHealth() != agentv1.Health_HEALTH_HEALTHY || !m.GetApplied() || m.GetIdentity().GetName() != "a" {
		t.Errorf("manifest = %v; want identity, health and applied kept, no status", m)
	}
	if len(m.GetMessage()) > maxManifestMessage || !strings.Contains(m.GetMessage(), "65536") || !strings.Contains(m.GetMessage(), "max_message_bytes") {
		t.Errorf("manifest message = %q; want one naming the limit 65536 (max_message_bytes)", m.GetMessage())
	}
	a.status.Push("a", "v1", "d2")
	if d := s.Recv(t, hubtest.Reports).GetStatusReport().GetDigest(); d != "d2" {
		t.Errorf("next report's digest = %q; want d2 on the same stream", d)
	}
	s.Recv(t, hubtest.Heartbeats)
	select {
	case <-hub.Streams:
		t.Error("the agent opened a new stream; want the first one kept")
	default:
	}
	if got := oversizedCount(t, reg, "status_report", "shrunk"); got != 1 {
		t.Errorf("tether_agent_oversized_messages_total{status_report,shrunk} = %v; want 1", got)
	}
}

// oversizedCount is tether_agent_oversized_messages_total{kind, action}.
func oversizedCount(t *testing.T, reg *prometheus.Registry, kind, action string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "tether_agent_oversized_messages_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["action"] == action {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// TestOversizedAckKeepsTheStream: an ack whose object results exceed the
// hub's limit goes without them, its result kept.
func TestOversizedAckKeepsTheStream(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.StartLimited(t, certs, "127.0.0.1:0", hubLimit)
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	a.applier.Fail("a", string(bytes.Repeat([]byte("e"), 2*hubLimit)))
	s := hub.Next(t)
	s.Send(t, limitedWelcome(hubA), hubtest.Upsert("a", "v1"), hubtest.SyncDone(1))
	ack := s.Recv(t, ackOf("a")).GetAck()
	if ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_FAILED || len(ack.GetMessage()) > 2*1024 || !strings.Contains(ack.GetMessage(), "65536") {
		t.Errorf("ack = %.200v; want FAILED with a short message naming the limit", ack)
	}
	s.Recv(t, hubtest.Heartbeats)
	select {
	case <-hub.Streams:
		t.Error("the agent opened a new stream; want the first one kept")
	case <-time.After(0):
	}
}
