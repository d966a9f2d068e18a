package hubclient

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Stream states, the label "state" of tether_agent_stream_state: the one
// the stream is in is 1, the others 0.
const (
	// streamDisconnected: no stream (before the first, and between two).
	streamDisconnected = "disconnected"
	// streamConnecting: Hello sent, no Welcome yet.
	streamConnecting = "connecting"
	// streamSyncing: welcomed, the hub's initial difference not done.
	streamSyncing = "syncing"
	// streamSynced: the hub's SyncDone received on this stream.
	streamSynced = "synced"
)

var streamStates = []string{streamDisconnected, streamConnecting, streamSyncing, streamSynced}

// Buckets of the latency histograms, in seconds: from a ConfigMap applied
// in a few milliseconds to a CRD waiting minutes to be established.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// metrics describe the client: its stream, the works it holds, their
// applies and deletions, the status reports' lag, and what it could not
// send as it was.
type metrics struct {
	// oversized counts messages over the hub's max_message_bytes, by kind
	// (status_report, ack, heartbeat, ...) and action (actionShrunk,
	// actionDropped).
	oversized *prometheus.CounterVec
	// stream is 1 for the state the stream is in, by state.
	stream *prometheus.GaugeVec
	// applies counts works applied, by result (applied, failed, conflict).
	applies *prometheus.CounterVec
	// applySeconds is how long each apply of a work took.
	applySeconds prometheus.Histogram
	// deletes counts works whose deletion was carried out, by reason.
	deletes *prometheus.CounterVec
	// statusLag is how old a status report is when it is sent: from the
	// member's observation to the stream.
	statusLag prometheus.Histogram
	// lastSync is when the last SyncDone was received, Unix seconds.
	lastSync prometheus.Gauge
	// synced is set at the first SyncDone and stays set (Client.Synced).
	synced atomic.Bool
}

// newMetrics builds the metrics and registers them on reg when it is set;
// held reports how many works the client holds.
func newMetrics(reg prometheus.Registerer, held func() int) (*metrics, error) {
	m := &metrics{
		oversized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_agent_oversized_messages_total",
			Help: "Messages to the hub over its Settings.limits.max_message_bytes, by kind and by what the agent did (shrunk: sent smaller, saying what was left out; dropped: not sent).",
		}, []string{"kind", "action"}),
		stream: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tether_agent_stream_state",
			Help: "1 for the state the agent's stream to the hub is in (disconnected, connecting: Hello sent; syncing: welcomed; synced: SyncDone received), 0 for the others.",
		}, []string{"state"}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_agent_work_applies_total",
			Help: "Applies of a work to the member cluster, by result (applied, failed, conflict); a failed apply is retried with backoff and counted again.",
		}, []string{"result"}),
		applySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tether_agent_work_apply_duration_seconds",
			Help:    "How long an apply of a work to the member cluster took, whatever its result.",
			Buckets: latencyBuckets,
		}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tether_agent_work_deletions_total",
			Help: "Works whose deletion the agent carried out (its objects deleted or orphaned by the work's policy), by reason (template_deleted, placement_changed, ..., orphan_expired for an eviction).",
		}, []string{"reason"}),
		statusLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tether_agent_status_report_lag_seconds",
			Help:    "Age of a status report when it is sent to the hub: from the agent observing the status in the member cluster to the send.",
			Buckets: latencyBuckets,
		}),
		lastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tether_agent_last_sync_timestamp_seconds",
			Help: "When the agent last received the hub's SyncDone, Unix seconds; 0 before the first.",
		}),
	}
	worksHeld := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tether_agent_works_held",
		Help: "Works the agent holds (in its state), applied or not, deletions in progress included.",
	}, func() float64 { return float64(held()) })
	m.setStream(streamDisconnected)
	if reg != nil {
		for _, c := range []prometheus.Collector{m.oversized, m.stream, m.applies, m.applySeconds, m.deletes, m.statusLag, m.lastSync, worksHeld} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register hub client metrics: %w", err)
			}
		}
	}
	return m, nil
}

// setStream marks the stream in state.
func (m *metrics) setStream(state string) {
	for _, s := range streamStates {
		v := 0.0
		if s == state {
			v = 1
		}
		m.stream.WithLabelValues(s).Set(v)
	}
}

// syncDone records a SyncDone received at now.
func (m *metrics) syncDone(now time.Time) {
	m.setStream(streamSynced)
	m.lastSync.Set(float64(now.UnixNano()) / 1e9)
	m.synced.Store(true)
}

// applied records an apply's result and duration.
func (m *metrics) applied(ack *agentv1.Ack, took time.Duration) {
	m.applies.WithLabelValues(resultLabel(ack.GetResult())).Inc()
	m.applySeconds.Observe(took.Seconds())
}

// reported records the lag of a status report sent at now.
func (m *metrics) reported(r *agentv1.StatusReport, now time.Time) {
	if r.GetObserveTime() != nil {
		m.statusLag.Observe(max(now.Sub(r.GetObserveTime().AsTime()), 0).Seconds())
	}
}

// resultLabel is r as a metric label: "applied", "failed", ...
func resultLabel(r agentv1.ApplyResult) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "APPLY_RESULT_"))
}

// reasonLabel is r as a metric label: "template_deleted", "failover", ...
func reasonLabel(r agentv1.DeleteReason) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "DELETE_REASON_"))
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
