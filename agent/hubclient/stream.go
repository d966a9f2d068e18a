package hubclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/peer"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// streamResult is how a stream ended.
type streamResult struct {
	err        error
	synced     bool          // the stream reached SyncDone
	retryAfter time.Duration // from Goodbye; 0 for the client's backoff
	// moveOn: the hub said Goodbye SHUTDOWN or REBALANCE, reconnect
	// (possibly to another replica); the next stream comes on a new
	// connection that tries addr last (moveon.go).
	moveOn bool
	addr   string // the hub address the stream reached; "" if unknown
}

// conn is one stream's I/O state, owned by Client.stream's goroutine.
type conn struct {
	c         *Client
	stream    agentv1.AgentService_ConnectClient
	addr      string            // the hub address the stream reached, for the logs
	heartbeat chan beatSettings // new Settings, to the heartbeat goroutine
	res       streamResult
	// renewTimer fires when the certificate renewal is due; nil until
	// Welcome, and when the client does not renew (renewal.go).
	renewTimer *time.Timer
}

// beatSettings are what the heartbeat goroutine needs of Settings.
type beatSettings struct {
	every  time.Duration            // the heartbeat interval
	models []*agentv1.ResourceModel // for the capacity report
}

type received struct {
	msg *agentv1.HubMessage
	err error
}

// stream runs one stream from Hello until it ends.
func (c *Client) stream(ctx context.Context) streamResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := agentv1.NewAgentServiceClient(c.conn).Connect(ctx)
	if err != nil {
		return streamResult{err: fmt.Errorf("open stream to %s: %w", strings.Join(c.cfg.Addrs, ","), err)}
	}
	c.mu.Lock()
	hello := c.books.Hello(c.cfg.AgentVersion)
	c.mu.Unlock()
	hello.CustomizationsVersion = c.customizationsVersion()
	hello.CustomizationsSupported = c.cfg.Customizations != nil
	defer c.endStream()
	c.metrics.setStream(streamConnecting)
	if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}}); err != nil {
		return streamResult{err: fmt.Errorf("send Hello: %w", err)}
	}
	c.log.Debug("hello sent", "last_hub_identity", hello.GetLastHubIdentity(), "held_works", len(hello.GetHeldWorks()))
	s := &conn{c: c, stream: stream, addr: peerAddr(stream.Context()), heartbeat: make(chan beatSettings, 1)}
	s.res.addr = s.addr
	in := make(chan received)
	beats := make(chan *agentv1.Heartbeat)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.receive(ctx, in) }()
	go func() { defer wg.Done(); s.beat(ctx, beats) }()
	s.res.err = s.loop(ctx, in, beats)
	cancel() // ends Recv and the heartbeat goroutine
	wg.Wait()
	if s.renewTimer != nil {
		s.renewTimer.Stop()
	}
	c.renewal.asked = false // an answer can only come on this stream
	return s.res
}

// peerAddr is the address of the hub end of a stream; "" if unknown.
func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// endStream drops what was queued for the stream that ended.
func (c *Client) endStream() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.books.EndStream()
	c.outbox = nil
	c.metrics.setStream(streamDisconnected)
}

// receive hands every received message to loop until Recv fails.
func (s *conn) receive(ctx context.Context, in chan<- received) {
	for {
		msg, err := s.stream.Recv()
		select {
		case in <- received{msg: msg, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// loop sends and handles messages until the stream ends, and says why.
func (s *conn) loop(ctx context.Context, in <-chan received, beats <-chan *agentv1.Heartbeat) error {
	var reports <-chan *agentv1.StatusReport // nil until Welcome
	for {
		select {
		case r := <-in:
			if r.err != nil {
				return recvError(r.err)
			}
			if err := s.handle(ctx, r.msg); err != nil {
				return err
			}
			if reports == nil && s.c.cfg.Status != nil && s.welcomed() {
				reports = s.c.cfg.Status.Reports()
			}
		case <-s.c.wake:
			if err := s.drain(); err != nil {
				return err
			}
		case r := <-reports:
			if err := s.report(r); err != nil {
				return err
			}
		case hb := <-beats:
			s.c.mu.Lock()
			hb.Conditions = append(hb.Conditions, s.c.books.Conditions(s.c.cfg.Now())...) // the hub's trust, unmanaged works
			s.c.mu.Unlock()
			if err := s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: hb}}); err != nil {
				return err
			}
		case <-s.renewDue():
			if err := s.askRenewal(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// renewDue is the renewal timer's channel; nil (never ready) without one.
func (s *conn) renewDue() <-chan time.Time {
	if s.renewTimer == nil {
		return nil
	}
	return s.renewTimer.C
}

func recvError(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("the hub closed the stream")
	}
	return fmt.Errorf("receive: %w", err)
}

func (s *conn) welcomed() bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.books.s != nil && s.c.books.s.hub != ""
}

// send sends msg, shrunk to the hub's limit (fit), and records its
// delivery. A message that cannot be made to fit is logged, counted and
// not sent; the stream goes on.
func (s *conn) send(msg *agentv1.AgentMessage) error {
	out, action := fit(msg, s.c.maxMessageBytes)
	if action != "" {
		s.c.oversized(msg, action)
	}
	if out != nil {
		if err := s.stream.Send(out); err != nil {
			return fmt.Errorf("send: %w", err)
		}
	}
	s.c.mu.Lock()
	s.c.books.Delivered(msg)
	s.c.mu.Unlock()
	return nil
}

// drain sends what the outbox holds.
func (s *conn) drain() error {
	for {
		s.c.mu.Lock()
		if len(s.c.outbox) == 0 {
			s.c.mu.Unlock()
			return nil
		}
		msg := s.c.outbox[0]
		s.c.outbox = s.c.outbox[1:]
		s.c.mu.Unlock()
		if err := s.send(msg); err != nil {
			return err
		}
	}
}

// report forwards r when it describes a held version of the stream's hub.
func (s *conn) report(r *agentv1.StatusReport) error {
	s.c.mu.Lock()
	ok := s.c.books.Report(r)
	s.c.mu.Unlock()
	if !ok {
		return nil
	}
	if err := s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: r}}); err != nil {
		return err
	}
	s.c.metrics.reported(r, s.c.cfg.Now())
	s.c.mu.Lock()
	s.c.books.Reported(r)
	s.c.mu.Unlock()
	return nil
}
