package agentapi

import (
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Defaults of Config.MessageRates: how many messages of each kind one
// stream may send, far above what an agent sends, so that only a broken or
// hostile one reaches them.
const (
	// DefaultAckRate and DefaultStatusReportRate are acks and status
	// reports per second per stream: an agent acks each work version it is
	// sent and reports each work at most every StatusMinInterval (2 s), so
	// 10,000 works whose status all change at once send 5,000 reports a
	// second. Their bursts default to twice Config.MaxWorks (20,000): a
	// resync of every work the stream serves, after a reconnect, fits twice.
	DefaultAckRate          = 5000
	DefaultStatusReportRate = 5000
	// DefaultHeartbeatRate is heartbeats per second per stream, with bursts
	// of DefaultHeartbeatBurst: an agent sends one every HeartbeatInterval
	// (10 s) and one at each new Settings. With a HeartbeatInterval under
	// 2 s, the rate is two per interval.
	DefaultHeartbeatRate  = 1
	DefaultHeartbeatBurst = 10
	// DefaultCertificateRenewalRate is renewals per second per stream (one
	// per renewalMinInterval, 2 s, the shortest wait of an agent between
	// two), with bursts of DefaultCertificateRenewalBurst. Renewals sooner
	// than renewalMinInterval are refused on the stream; past this rate the
	// stream ends.
	DefaultCertificateRenewalRate  = 0.5
	DefaultCertificateRenewalBurst = 10
	// DefaultCustomizationsAckRate is customizations acks per second per
	// stream, with bursts of DefaultCustomizationsAckBurst: an agent sends
	// one for each set the hub sends it, which happens when a user changes
	// a customization.
	DefaultCustomizationsAckRate  = 1
	DefaultCustomizationsAckBurst = 100
)

// KindStreamLimit counts (Config.Counts, component "agentapi") the streams
// ended for sending past a per-stream limit of a message kind: the hub's
// tether_hub_controller_errors_total{component="agentapi",kind="stream_limit"}.
const KindStreamLimit = "stream_limit"

// KindStreamOpenLimit counts (Config.Counts, component "agentapi") the
// streams refused because their cluster opened streams too often
// (Config.StreamOpenRate).
const KindStreamOpenLimit = "stream_open_limit"

// Rate bounds one kind of message on one stream: a token bucket of Burst
// messages refilled at PerSecond messages a second.
type Rate struct {
	// PerSecond is the sustained rate, messages per second.
	PerSecond float64
	// Burst is how many messages may come at once, after a quiet spell.
	Burst int
}

// MessageRates bounds each kind of message an agent sends on one stream,
// after Hello (one per stream). A stream that sends past a bound ends with
// Goodbye LIMIT_EXCEEDED and ResourceExhausted naming the cluster, the kind
// and the bound; the agent reconnects, and nothing it holds is affected.
// Zero fields mean the defaults.
type MessageRates struct {
	Ack                Rate
	StatusReport       Rate
	Heartbeat          Rate
	CertificateRenewal Rate
	CustomizationsAck  Rate
}

// withDefaults fills zero rates: acks and reports burst to twice maxWorks,
// heartbeats to at least two per heartbeat interval.
func (r MessageRates) withDefaults(maxWorks int, heartbeat time.Duration) MessageRates {
	def := func(rt *Rate, perSecond float64, burst int) {
		if rt.PerSecond <= 0 {
			rt.PerSecond = perSecond
		}
		if rt.Burst <= 0 {
			rt.Burst = burst
		}
	}
	def(&r.Ack, DefaultAckRate, 2*maxWorks)
	def(&r.StatusReport, DefaultStatusReportRate, 2*maxWorks)
	def(&r.Heartbeat, max(DefaultHeartbeatRate, 2/heartbeat.Seconds()), DefaultHeartbeatBurst)
	def(&r.CertificateRenewal, DefaultCertificateRenewalRate, DefaultCertificateRenewalBurst)
	def(&r.CustomizationsAck, DefaultCustomizationsAckRate, DefaultCustomizationsAckBurst)
	return r
}

// messageKind names a kind of agent message in limits and their errors.
type messageKind string

const (
	kindAck                messageKind = "ack"
	kindStatusReport       messageKind = "status report"
	kindHeartbeat          messageKind = "heartbeat"
	kindCertificateRenewal messageKind = "certificate renewal"
	kindCustomizationsAck  messageKind = "customizations ack"
)

// kindOf is the limited kind of msg; "" for Hello and unknown messages,
// which end the stream anyway.
func kindOf(msg *agentv1.AgentMessage) messageKind {
	switch msg.GetMessage().(type) {
	case *agentv1.AgentMessage_Ack:
		return kindAck
	case *agentv1.AgentMessage_StatusReport:
		return kindStatusReport
	case *agentv1.AgentMessage_Heartbeat:
		return kindHeartbeat
	case *agentv1.AgentMessage_CertificateRenewal:
		return kindCertificateRenewal
	case *agentv1.AgentMessage_CustomizationsAck:
		return kindCustomizationsAck
	}
	return ""
}

// messageLimits is one stream's buckets, one per kind. Only the stream's
// receiver uses them.
type messageLimits struct {
	cluster string
	rates   map[messageKind]Rate
	buckets map[messageKind]*limiter
	// maxWait bounds the wait the Goodbye of a stream past a rate asks
	// for: the heartbeat interval, so that the cluster's lease never runs
	// out for it.
	maxWait time.Duration
}

func newMessageLimits(cluster string, r MessageRates, maxWait time.Duration) *messageLimits {
	rates := map[messageKind]Rate{kindAck: r.Ack, kindStatusReport: r.StatusReport, kindHeartbeat: r.Heartbeat,
		kindCertificateRenewal: r.CertificateRenewal, kindCustomizationsAck: r.CustomizationsAck}
	m := &messageLimits{cluster: cluster, rates: rates, buckets: make(map[messageKind]*limiter, len(rates)), maxWait: maxWait}
	for k, rt := range rates {
		m.buckets[k] = newLimiter(rt.PerSecond, rt.Burst)
	}
	return m
}

// allow takes one message of msg's kind at now, or says (ErrLimit) which
// bound it is past; the Goodbye then asks the agent to wait for the burst
// to refill (at most maxWait) before reconnecting.
func (m *messageLimits) allow(msg *agentv1.AgentMessage, now time.Time) error {
	kind := kindOf(msg)
	b, ok := m.buckets[kind]
	if !ok || b.allow(now) {
		return nil
	}
	rt := m.rates[kind]
	refill := time.Duration(float64(rt.Burst) / rt.PerSecond * float64(time.Second))
	return retryAfter{after: min(refill, m.maxWait), err: fmt.Errorf(
		"%w: cluster %q sent %s messages faster than the hub accepts on one stream (at most %g per second, bursts of %d)",
		ErrLimit, m.cluster, kind, rt.PerSecond, rt.Burst)}
}

// MaxCSRBytes is the largest CSR a CertificateRenewal may carry, bytes:
// 16 KiB, several times the PEM CSR of an RSA 4096 key.
const MaxCSRBytes = 16 << 10

// bounded checks msg against its kind's rate on the stream and the bounds
// of its content: a heartbeat the Leases refuses to hold (HeartbeatChecker),
// a CSR over MaxCSRBytes. The error wraps ErrLimit.
func (s *Server) bounded(st *stream, msg *agentv1.AgentMessage) error {
	if err := st.messages.allow(msg, time.Now()); err != nil {
		return err
	}
	switch m := msg.GetMessage().(type) {
	case *agentv1.AgentMessage_Heartbeat:
		if c, ok := s.leases.(HeartbeatChecker); ok {
			if err := c.CheckHeartbeat(m.Heartbeat); err != nil {
				return fmt.Errorf("%w: cluster %q sent a heartbeat larger than the hub holds: %v", ErrLimit, st.cluster, err)
			}
		}
	case *agentv1.AgentMessage_CertificateRenewal:
		if n := len(m.CertificateRenewal.GetCsrPem()); n > MaxCSRBytes {
			return fmt.Errorf("%w: cluster %q sent a certificate renewal whose CSR has %d bytes, more than %d",
				ErrLimit, st.cluster, n, MaxCSRBytes)
		}
	}
	return nil
}
