package hubclient

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// metrics count what the client could not send to the hub as it was.
type metrics struct {
	// oversized counts messages over the hub's max_message_bytes, by kind
	// (status_report, ack, heartbeat, ...) and action (actionShrunk,
	// actionDropped).
	oversized *prometheus.CounterVec
}

// newMetrics builds the metrics and registers them on reg when it is set.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{oversized: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tether_agent_oversized_messages_total",
		Help: "Messages to the hub over its Settings.limits.max_message_bytes, by kind and by what the agent did (shrunk: sent smaller, saying what was left out; dropped: not sent).",
	}, []string{"kind", "action"})}
	if reg != nil {
		if err := reg.Register(m.oversized); err != nil {
			return nil, fmt.Errorf("register hub client metrics: %w", err)
		}
	}
	return m, nil
}

// oversized logs and counts a message over the hub's limit.
func (c *Client) oversized(msg *agentv1.AgentMessage, action string) {
	kind := messageKind(msg)
	c.metrics.oversized.WithLabelValues(kind, action).Inc()
	c.log.Error("message over the hub's max message size; not sent as it was", "kind", kind, "action", action,
		"work", workOf(msg), "size_bytes", proto.Size(msg), "limit_bytes", c.maxMessageBytes)
}

// messageKind is the snake_case name of msg's kind, e.g. "status_report".
func messageKind(msg *agentv1.AgentMessage) string {
	if f := msg.ProtoReflect().WhichOneof(msg.ProtoReflect().Descriptor().Oneofs().ByName("message")); f != nil {
		return string(f.Name())
	}
	return "unknown"
}

// workOf is the work a message is about; "" for none.
func workOf(msg *agentv1.AgentMessage) string {
	return strings.TrimSpace(msg.GetStatusReport().GetWorkKey() + msg.GetAck().GetWorkKey())
}
