package security

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// agentStream is one agent's Connect stream after its initial sync.
type agentStream struct {
	cs     agentv1.AgentService_ConnectClient
	cancel context.CancelFunc
	// sync holds the upserts the hub sent before SyncDone.
	sync []*agentv1.WorkUpsert
	// msgs gets what the hub sends after SyncDone; closed when the stream
	// ends, after which err says how.
	msgs chan *agentv1.HubMessage
	err  error
}

// openStream connects with r's certificate, says Hello (claiming to hold
// the works of held, key → version) and reads up to SyncDone. A Goodbye is
// read past, so that the error is the stream's status.
func openStream(t *testing.T, h *hubProc, r registration, held ...*agentv1.HeldWork) (*agentStream, error) {
	t.Helper()
	conn := dial(t, h.addr, r.tlsConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &agentStream{cs: cs, cancel: cancel, msgs: make(chan *agentv1.HubMessage, 256)}
	if err := cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{AgentVersion: "security-test", HeldWorks: held}}}); err != nil {
		if errors.Is(err, io.EOF) {
			// The hub ended the stream first (a refusal); as gRPC says,
			// Send only reports io.EOF and Recv has the status.
			_, err = cs.Recv()
		}
		return nil, err
	}
	for {
		msg, err := cs.Recv()
		if err != nil {
			return nil, err
		}
		if u := msg.GetWorkUpsert(); u != nil {
			s.sync = append(s.sync, u)
		}
		if msg.GetSyncDone() != nil {
			break
		}
	}
	go func() {
		defer close(s.msgs)
		for {
			msg, err := cs.Recv()
			if err != nil {
				s.err = err
				return
			}
			s.msgs <- msg
		}
	}()
	return s, nil
}

func (s *agentStream) send(m *agentv1.AgentMessage) error { return s.cs.Send(m) }

// heartbeat reports the cluster Ready, serving Deployments.
func (s *agentStream) heartbeat() error {
	return s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		AgentVersion: "security-test", KubernetesVersion: "v1.34.4",
		Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements: []*agentv1.APIEnablement{
			{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
		},
	}}})
}

// nextUpsert returns the next work upsert within timeout.
func (s *agentStream) nextUpsert(timeout time.Duration) (*agentv1.WorkUpsert, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-s.msgs:
			if !ok {
				return nil, fmt.Errorf("stream ended: %w", s.err)
			}
			if u := msg.GetWorkUpsert(); u != nil {
				return u, nil
			}
		case <-timer.C:
			return nil, errors.New("no work upsert in time")
		}
	}
}

// ended waits up to timeout for the stream to end and returns the Goodbye
// it got, if any, and its final error.
func (s *agentStream) ended(timeout time.Duration) (*agentv1.Goodbye, error, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var bye *agentv1.Goodbye
	for {
		select {
		case msg, ok := <-s.msgs:
			if !ok {
				return bye, s.err, true
			}
			if g := msg.GetGoodbye(); g != nil {
				bye = g
			}
		case <-timer.C:
			return bye, nil, false
		}
	}
}
