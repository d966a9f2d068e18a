package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pki"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// testAgent speaks the real agent protocol over TLS with a certificate the
// hub's CA issued for its cluster; it applies nothing.
type testAgent struct {
	name string
	tls  *tls.Config
	// lastHub is the hub identity of the last Welcome, sent in Hello like
	// a real agent's persisted state; guarded by mu.
	mu      sync.Mutex
	lastHub string
}

// mintAgent mints the agent's certificate with `tether-hub mint-agent`.
func mintAgent(t *testing.T, dataDir, cluster string) *testAgent {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(hubBin, "mint-agent", "--data-dir", dataDir, "--cluster", cluster, "--out", out)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mint-agent %s: %v\n%s", cluster, err, output)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(out, "tls.crt"), filepath.Join(out, "tls.key"))
	if err != nil {
		t.Fatalf("minted certificate: %v", err)
	}
	return &testAgent{name: cluster, tls: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: caPool(t, filepath.Join(out, "ca.crt")), MinVersion: tls.VersionTLS12,
	}}
}

// agentFromCA mints in the test process, for many agents at once.
func agentFromCA(t *testing.T, ca *pki.CA, cluster string) *testAgent {
	t.Helper()
	issued, err := ca.IssueClient(pki.Identity{Name: cluster, Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &testAgent{name: cluster, tls: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}
}

// stream is one agent stream after its initial sync.
type stream struct {
	conn    *grpc.ClientConn
	cs      agentv1.AgentService_ConnectClient
	cancel  context.CancelFunc
	welcome *agentv1.Welcome
	// sync holds the upserts and deletes the hub sent before SyncDone.
	sync []*agentv1.HubMessage
	// syncDone is the SyncDone that ended the initial sync.
	syncDone *agentv1.SyncDone
	// msgs receives what the hub sends after SyncDone; closed when the
	// stream ends.
	msgs chan *agentv1.HubMessage
	done chan struct{} // closed when the receiver has exited
	send sync.Mutex    // serializes cs.Send
}

// connect opens a stream, sends Hello with the held works (key → version)
// and reads up to SyncDone.
func (a *testAgent) connect(ctx context.Context, addr string, held map[string]string) (*stream, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(a.tls)))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &stream{conn: conn, cancel: cancel, msgs: make(chan *agentv1.HubMessage, 1024), done: make(chan struct{})}
	a.mu.Lock()
	lastHub := a.lastHub
	a.mu.Unlock()
	if err := s.open(ctx, agentv1.NewAgentServiceClient(conn), lastHub, held); err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("agent %s: %w", a.name, err)
	}
	a.mu.Lock()
	a.lastHub = s.welcome.GetHubIdentity()
	a.mu.Unlock()
	go s.receive()
	return s, nil
}

func (s *stream) open(ctx context.Context, client agentv1.AgentServiceClient, lastHub string, held map[string]string) error {
	cs, err := client.Connect(ctx)
	if err != nil {
		return err
	}
	s.cs = cs
	hello := &agentv1.Hello{AgentVersion: "integration-test", LastHubIdentity: lastHub}
	for k, v := range held {
		hello.HeldWorks = append(hello.HeldWorks, &agentv1.HeldWork{WorkKey: k, Version: v})
	}
	if err := cs.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}}); err != nil {
		return err
	}
	for {
		msg, err := cs.Recv()
		if err != nil {
			return err
		}
		switch {
		case msg.GetWelcome() != nil:
			s.welcome = msg.GetWelcome()
		case msg.GetGoodbye() != nil:
			return fmt.Errorf("goodbye: %v", msg.GetGoodbye())
		case msg.GetWorkUpsert() != nil || msg.GetWorkDelete() != nil:
			s.sync = append(s.sync, msg)
		case msg.GetSyncDone() != nil:
			s.syncDone = msg.GetSyncDone()
			return nil
		}
	}
}

func (s *stream) receive() {
	defer close(s.done)
	defer close(s.msgs)
	for {
		msg, err := s.cs.Recv()
		if err != nil {
			return
		}
		s.msgs <- msg
	}
}

// heartbeat reports the cluster Ready.
func (s *stream) heartbeat() error {
	return s.sendMsg(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		AgentVersion: "integration-test", KubernetesVersion: "v1.34.4",
		Conditions:     []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements: servedAPIs,
	}}})
}

// servedAPIs are the kinds the test members serve: what the tests apply,
// including the custom resource Widget (its CRD installed there).
var servedAPIs = []*agentv1.APIEnablement{
	{GroupVersion: "v1", Resources: []*agentv1.APIResource{
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, {Name: "namespaces", Kind: "Namespace"},
	}},
	{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
	{GroupVersion: "widgets.example.com/v1", Resources: []*agentv1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true}}},
}

// ack acknowledges a work version as applied.
func (s *stream) ack(key, version string) error {
	return s.sendMsg(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: key, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED,
	}}})
}

func (s *stream) sendMsg(m *agentv1.AgentMessage) error {
	s.send.Lock()
	defer s.send.Unlock()
	return s.cs.Send(m)
}

// next returns the next work upsert or delete, skipping other messages.
func (s *stream) next(timeout time.Duration) (*agentv1.HubMessage, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-s.msgs:
			if !ok {
				return nil, errors.New("stream ended")
			}
			if msg.GetWorkUpsert() != nil || msg.GetWorkDelete() != nil {
				return msg, nil
			}
		case <-timer.C:
			return nil, fmt.Errorf("no work message within %s", timeout)
		}
	}
}

// close ends the stream and waits for its receiver.
func (s *stream) close() {
	s.cancel()
	s.conn.Close()
	<-s.done
}

// keepConnected holds a stream to the hub at addr() that heartbeats every
// interval, reconnecting (with the works it was sent) whenever the stream
// ends, until the returned stop is called; stop waits for it.
func (a *testAgent) keepConnected(addr func() string, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		held := map[string]string{}
		for ctx.Err() == nil {
			s, err := a.connect(ctx, addr(), held)
			if err == nil {
				a.follow(ctx, s, held, interval)
				s.close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// follow records works and heartbeats until the stream or ctx ends.
func (a *testAgent) follow(ctx context.Context, s *stream, held map[string]string, interval time.Duration) {
	record := func(m *agentv1.HubMessage) {
		if u := m.GetWorkUpsert(); u != nil {
			held[u.GetWorkKey()] = u.GetVersion()
			_ = s.ack(u.GetWorkKey(), u.GetVersion())
		}
		if d := m.GetWorkDelete(); d != nil {
			delete(held, d.GetWorkKey())
		}
	}
	for _, m := range s.sync {
		record(m)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	if s.heartbeat() != nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-s.msgs:
			if !ok {
				return
			}
			record(m)
		case <-tick.C:
			if s.heartbeat() != nil {
				return
			}
		}
	}
}
