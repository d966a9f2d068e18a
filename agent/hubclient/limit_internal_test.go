package hubclient

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func TestFit(t *testing.T) {
	long := strings.Repeat("x", 4096)
	hb := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		AgentVersion: "v1", Conditions: []*agentv1.Condition{{Type: "Ready", Message: long}},
	}}}
	cack := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
		Version: "c1", Refused: []string{long, long},
	}}}
	renewal := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CertificateRenewal{CertificateRenewal: &agentv1.CertificateRenewal{
		CsrPem: []byte(long),
	}}}
	report := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
		WorkKey: "w", Version: "v", Manifests: []*agentv1.ManifestStatus{{Health: agentv1.Health(99), StatusJson: []byte(long)}},
	}}}
	tests := []struct {
		name   string
		msg    *agentv1.AgentMessage
		limit  int64
		action string
		check  func(*agentv1.AgentMessage) bool
	}{
		{"no limit known", hb, 0, "", func(m *agentv1.AgentMessage) bool { return m == hb }},
		{"under the limit", hb, 1 << 20, "", func(m *agentv1.AgentMessage) bool { return m == hb }},
		{"heartbeat keeps the version only", hb, 1024, actionShrunk, func(m *agentv1.AgentMessage) bool {
			return proto.Equal(m.GetHeartbeat(), &agentv1.Heartbeat{AgentVersion: "v1"})
		}},
		{"customizations ack keeps its version", cack, 1024, actionShrunk, func(m *agentv1.AgentMessage) bool {
			a := m.GetCustomizationsAck()
			return a.GetVersion() == "c1" && len(a.GetRefused()) == 1 && strings.Contains(a.GetRefused()[0], "1024")
		}},
		{"report with an unknown health", report, 1024, actionShrunk, func(m *agentv1.AgentMessage) bool {
			ms := m.GetStatusReport().GetManifests()
			return len(ms) == 1 && ms[0].GetHealth() == 0 && len(ms[0].GetStatusJson()) == 0
		}},
		{"renewal cannot shrink", renewal, 1024, actionDropped, func(m *agentv1.AgentMessage) bool { return m == nil }},
		{"nothing fits a tiny limit", report, 10, actionDropped, func(m *agentv1.AgentMessage) bool { return m == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, action := fit(tt.msg, tt.limit)
			if action != tt.action || !tt.check(got) {
				t.Errorf("fit(%s, %d) = %.300v, %q; want action %q", tt.name, tt.limit, got, action, tt.action)
			}
			if got != nil && tt.limit > 0 && int64(proto.Size(got)) > tt.limit {
				t.Errorf("fit(%s, %d) is %d bytes; want at most the limit", tt.name, tt.limit, proto.Size(got))
			}
		})
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	if got := truncate("héllo", 2); got != "h" {
		t.Errorf("truncate(héllo, 2) = %q; want h", got)
	}
}
