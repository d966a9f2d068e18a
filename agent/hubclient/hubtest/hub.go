package hubtest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Timeout bounds every wait of the helpers.
const Timeout = 10 * time.Second

// Hub is a fake hub: an AgentService on real gRPC over TLS (client
// certificates required) on 127.0.0.1. Each Connect becomes a Stream on
// Streams, which the test drives by hand.
type Hub struct {
	// Addr is the hub's address, host:port.
	Addr string
	// Streams receives every stream opened by an agent, after its first
	// message was read.
	Streams chan *Stream

	t       testing.TB
	gs      *grpc.Server
	served  chan struct{}
	recvers sync.WaitGroup // receive goroutines; they end once Connect returned
	mu      sync.Mutex     // guards refusal and refused
	refusal []*agentv1.HubMessage
	refused int
	agentv1.UnimplementedAgentServiceServer
}

// Start starts a hub on addr ("127.0.0.1:0" for any port), serving
// certs.Server, and stops it when the test ends.
func Start(t testing.TB, certs *Certs, addr string) *Hub {
	t.Helper()
	return StartServing(t, certs, addr, certs.Server)
}

// StartLimited is Start with a hub that refuses agent messages larger
// than maxBytes, as the real hub does (gRPC's MaxRecvMsgSize, announced
// as Settings.limits.max_message_bytes): the stream ends with
// RESOURCE_EXHAUSTED.
func StartLimited(t testing.TB, certs *Certs, addr string, maxBytes int) *Hub {
	t.Helper()
	return start(t, certs, addr, certs.Server, grpc.MaxRecvMsgSize(maxBytes))
}

// StartServing is Start with the serving certificate serving, e.g. one of
// Certs.ServingFor.
func StartServing(t testing.TB, certs *Certs, addr string, serving tls.Certificate) *Hub {
	t.Helper()
	return start(t, certs, addr, serving)
}

func start(t testing.TB, certs *Certs, addr string, serving tls.Certificate, opts ...grpc.ServerOption) *Hub {
	t.Helper()
	ln, err := listen(addr)
	if err != nil {
		t.Fatalf("hubtest: listen on %s: %v", addr, err)
	}
	creds := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{serving},
		ClientCAs:    certs.Pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	})
	h := &Hub{Addr: ln.Addr().String(), Streams: make(chan *Stream, 16), t: t, served: make(chan struct{})}
	h.gs = grpc.NewServer(append(opts, grpc.Creds(creds))...)
	agentv1.RegisterAgentServiceServer(h.gs, h)
	go func() {
		defer close(h.served)
		_ = h.gs.Serve(ln)
	}()
	t.Cleanup(h.Stop)
	return h
}

// listen retries briefly: a restarted hub reuses the port of the old one.
func listen(addr string) (net.Listener, error) {
	deadline := time.Now().Add(Timeout)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop closes every stream and the listener, and waits for every goroutine
// of the hub. It may be called more than once.
func (h *Hub) Stop() {
	h.gs.Stop()
	<-h.served
	h.recvers.Wait()
}

// Connect serves one stream: it hands it to the test and waits until the
// test closes it or the agent goes.
func (h *Hub) Connect(ss agentv1.AgentService_ConnectServer) error {
	if p, ok := peer.FromContext(ss.Context()); !ok || p.AuthInfo == nil {
		return errors.New("hubtest: no TLS peer")
	}
	s := &Stream{ss: ss, in: make(chan *agentv1.AgentMessage, 1024), done: make(chan struct{}), gone: make(chan struct{})}
	first, err := ss.Recv()
	if err != nil {
		return err
	}
	s.First = first
	if refusal := h.refusing(); refusal != nil {
		for _, m := range refusal {
			if err := ss.Send(m); err != nil {
				return err
			}
		}
		return nil
	}
	h.recvers.Add(1)
	go func() {
		defer h.recvers.Done()
		s.receive()
	}()
	select {
	case h.Streams <- s:
	case <-ss.Context().Done():
		return ss.Context().Err()
	}
	select {
	case <-s.done:
		return s.err
	case <-ss.Context().Done():
		return ss.Context().Err()
	}
}

// Refuse makes the hub answer every stream from now on with msgs right
// after the agent's Hello, and end it, as a replica that refuses agents
// (a Goodbye SHUTDOWN) while its TCP connections stay up. Refused streams
// never reach Streams; nil msgs serve streams again.
func (h *Hub) Refuse(msgs ...*agentv1.HubMessage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refusal = msgs
}

// Refused returns how many streams the hub refused (Refuse).
func (h *Hub) Refused() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refused
}

// refusing returns what to answer a new stream with when the hub refuses
// it, and counts it; nil when the hub serves it.
func (h *Hub) refusing() []*agentv1.HubMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refusal != nil {
		h.refused++
	}
	return h.refusal
}

// Next returns the next stream an agent opens.
func (h *Hub) Next(t testing.TB) *Stream {
	t.Helper()
	select {
	case s := <-h.Streams:
		return s
	case <-time.After(Timeout):
		t.Fatalf("hubtest: no agent stream within %s", Timeout)
		return nil
	}
}

// Stream is one agent stream on the fake hub.
type Stream struct {
	// First is the agent's first message (its Hello).
	First *agentv1.AgentMessage

	ss agentv1.AgentService_ConnectServer
	in chan *agentv1.AgentMessage // received after First
	// skipped are received messages Recv passed over; only the test's
	// goroutine uses it.
	skipped []*agentv1.AgentMessage
	gone    chan struct{} // closed when Recv failed
	once    sync.Once
	done    chan struct{} // closed by Close
	err     error         // what Connect returns
}

func (s *Stream) receive() {
	defer close(s.gone)
	for {
		msg, err := s.ss.Recv()
		if err != nil {
			return
		}
		select {
		case s.in <- msg:
		case <-s.ss.Context().Done():
			return
		}
	}
}

// Peer returns the agent's address: streams of one connection share it, a
// new connection has another port.
func (s *Stream) Peer() string {
	if p, ok := peer.FromContext(s.ss.Context()); ok {
		return p.Addr.String()
	}
	return ""
}

// Hello returns the agent's Hello.
func (s *Stream) Hello() *agentv1.Hello { return s.First.GetHello() }

// Send sends msg to the agent.
func (s *Stream) Send(t testing.TB, msgs ...*agentv1.HubMessage) {
	t.Helper()
	for _, m := range msgs {
		if err := s.ss.Send(m); err != nil {
			t.Fatalf("hubtest: send %T: %v", m.GetMessage(), err)
		}
	}
}

// Close ends the stream with err (nil: a clean end).
func (s *Stream) Close(err error) {
	s.once.Do(func() {
		s.err = err
		close(s.done)
	})
}

// Recv returns the next message from the agent for which keep is true
// (nil keeps all), failing the test after Timeout. Messages passed over
// stay for later calls, in order.
func (s *Stream) Recv(t testing.TB, keep func(*agentv1.AgentMessage) bool) *agentv1.AgentMessage {
	t.Helper()
	for i, m := range s.skipped {
		if keep == nil || keep(m) {
			s.skipped = append(s.skipped[:i:i], s.skipped[i+1:]...)
			return m
		}
	}
	timeout := time.After(Timeout)
	for {
		select {
		case m := <-s.in:
			if keep == nil || keep(m) {
				return m
			}
			s.skipped = append(s.skipped, m)
		case <-timeout:
			t.Fatalf("hubtest: no wanted agent message within %s", Timeout)
			return nil
		}
	}
}

// Acks keeps acks only, for Recv.
func Acks(m *agentv1.AgentMessage) bool { return m.GetAck() != nil }

// Heartbeats keeps heartbeats only, for Recv.
func Heartbeats(m *agentv1.AgentMessage) bool { return m.GetHeartbeat() != nil }

// Reports keeps status reports only, for Recv.
func Reports(m *agentv1.AgentMessage) bool { return m.GetStatusReport() != nil }

// WaitGone waits until the agent has closed its side of the stream.
func (s *Stream) WaitGone(ctx context.Context) error {
	select {
	case <-s.gone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
