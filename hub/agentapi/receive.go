package agentapi

import (
	"context"
	"errors"
	"fmt"
	"io"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/syncstate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// receive reads the stream: the first message goes to Connect through
// first, the others, once the session exists, to handle. It returns when
// Recv fails, which for a stream Connect ended happens once Connect has
// returned.
func (s *Server) receive(ctx context.Context, ss agentv1.AgentService_ConnectServer, st *stream, first chan<- received) {
	defer s.receivers.Done()
	msg, err := ss.Recv()
	first <- received{msg: msg, err: err}
	if err != nil {
		return
	}
	select {
	case <-st.ready:
	case <-ctx.Done():
		return
	}
	for {
		msg, err := ss.Recv()
		if err != nil {
			st.end(recvError(st, err, s.cfg.MaxMessageBytes))
			return
		}
		if err := s.handle(ctx, st, msg); err != nil {
			st.end(err)
			return
		}
	}
}

// recvError turns a Recv error into the reason the stream ends.
func recvError(st *stream, err error, maxBytes int) error {
	if errors.Is(err, io.EOF) {
		return errAgentClosed
	}
	if status.Code(err) == codes.ResourceExhausted {
		return fmt.Errorf("%w: a message from cluster %q is larger than the hub accepts (%d bytes, Settings.limits.max_message_bytes): %s",
			ErrLimit, st.cluster, maxBytes, status.Convert(err).Message())
	}
	return err
}

// handle acts on one message from the agent after Hello, once it is
// within the stream's bounds (bounded).
func (s *Server) handle(ctx context.Context, st *stream, msg *agentv1.AgentMessage) error {
	if err := s.bounded(st, msg); err != nil {
		s.cfg.Counts.Add("agentapi", KindStreamLimit)
		return err
	}
	switch m := msg.GetMessage().(type) {
	case *agentv1.AgentMessage_Ack:
		if !st.accept(func(ss *syncstate.Session) bool { return ss.AcceptAck(m.Ack) }) {
			st.log.Debug("stale ack discarded", "work", m.Ack.GetWorkKey(), "version", m.Ack.GetVersion())
			return nil
		}
		if err := s.statuses.Ack(ctx, st.cluster, m.Ack); err != nil {
			return s.statusesError("ack", m.Ack.GetWorkKey(), err)
		}
	case *agentv1.AgentMessage_StatusReport:
		return s.report(ctx, st, m.StatusReport)
	case *agentv1.AgentMessage_Heartbeat:
		s.leases.Heartbeat(st.cluster, m.Heartbeat)
	case *agentv1.AgentMessage_CertificateRenewal:
		return s.renew(ctx, st, m.CertificateRenewal)
	case *agentv1.AgentMessage_CustomizationsAck:
		st.customizationsAck(m.CustomizationsAck)
	case *agentv1.AgentMessage_Hello:
		return fmt.Errorf("%w: Hello is allowed only as the first message of a stream", ErrProtocol)
	default:
		return fmt.Errorf("%w: empty or unknown agent message", ErrProtocol)
	}
	return nil
}

// report validates one status report at the boundary and hands it to the
// statuses. An invalid report is refused alone: logged, counted, dropped,
// and the stream goes on.
func (s *Server) report(ctx context.Context, st *stream, r *agentv1.StatusReport) error {
	if err := ValidateStatusReport(r); err != nil {
		s.cfg.Counts.Add("agentapi", guard.KindRefused)
		st.log.Warn("status report refused", "work", r.GetWorkKey(), "version", r.GetVersion(), "error", err)
		return nil
	}
	if !st.accept(func(ss *syncstate.Session) bool { return ss.AcceptStatus(r) }) {
		st.log.Debug("stale status report discarded", "work", r.GetWorkKey(), "version", r.GetVersion())
		return nil
	}
	err := s.statuses.Report(ctx, st.cluster, r)
	switch {
	case errors.Is(err, ErrInvalidReport):
		st.log.Warn("status report refused", "work", r.GetWorkKey(), "version", r.GetVersion(), "error", err)
	case err != nil:
		return s.statusesError("status", r.GetWorkKey(), err)
	}
	return nil
}

// statusesError is why a stream ends when Statuses refused what it sent:
// a limit of its own cluster (ErrLimit: Goodbye LIMIT_EXCEEDED naming it,
// the agent asked to wait a heartbeat interval), or Unavailable.
func (s *Server) statusesError(what, key string, err error) error {
	if errors.Is(err, ErrLimit) {
		return retryAfter{after: s.cfg.HeartbeatInterval, err: fmt.Errorf("record %s of work %q: %w", what, key, err)}
	}
	return fmt.Errorf("%w: record %s of work %q: %v", ErrUnavailable, what, key, err)
}
