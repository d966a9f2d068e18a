package tunnelconn

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// MaxFrame is the most data one TunnelFrame carries (32 KiB): writes are
// cut to it, so that no frame comes near gRPC's message limits and streams
// share the connection in small turns.
const MaxFrame = 32 << 10

// Stream is what Conn needs of a gRPC stream of TunnelFrames: the client
// and server streams of Tunnel both have it.
type Stream interface {
	Send(*agentv1.TunnelFrame) error
	Recv() (*agentv1.TunnelFrame, error)
}

// ErrClosed is returned by the reads and writes of a closed Conn.
var ErrClosed = errors.New("tunnelconn: connection closed")

// Conn is a net.Conn over one Stream. Reads honour read deadlines (the
// HTTP server needs them to hand a connection over to an upgrade); write
// deadlines are accepted and not enforced: a write waits for the stream's
// flow control, and Close ends it.
type Conn struct {
	stream Stream
	end    func() // ends the stream: cancels it, or lets its handler return
	local  net.Addr
	remote net.Addr

	frames chan []byte   // the pump's frames, one ahead of Read at most
	done   chan struct{} // closed by Close
	pumped chan struct{} // closed when the pump has exited: the stream has ended
	once   sync.Once

	sendMu sync.Mutex // guards stream.Send: one sender at a time

	readMu   sync.Mutex // guards pending and rerr: one reader at a time
	pending  []byte     // the rest of the frame Read returned part of
	rerr     error      // the stream's end, once the pump reported it
	deadline deadlineTimer
}

// New returns a Conn over s. end is called once, by the first Close, and
// must make the stream end without losing what was sent: on the agent, a
// half-close (CloseSend) after which the hub ends the stream, with a
// cancel as the fallback; on the hub, letting the Tunnel handler return. first is data received
// before (the rest of the agent's first frame), or nil.
func New(s Stream, end func(), local, remote net.Addr, first []byte) *Conn {
	c := &Conn{stream: s, end: end, local: local, remote: remote, pending: first,
		frames: make(chan []byte), done: make(chan struct{}), pumped: make(chan struct{})}
	c.deadline.init()
	go c.pump()
	return c
}

// pump receives frames until the stream ends; it hands each to Read and
// receives the next only when Read took it, so the stream's flow control
// follows the reader. Once the Conn is closed it discards what still
// arrives until the stream's end, which end guarantees: receiving until an
// error is what releases a gRPC client stream.
func (c *Conn) pump() {
	defer close(c.pumped)
	defer close(c.frames)
	closed := false
	for {
		f, err := c.stream.Recv()
		if err != nil {
			return
		}
		if closed || len(f.GetData()) == 0 {
			continue
		}
		select {
		case c.frames <- f.GetData():
		case <-c.done:
			closed = true
		}
	}
}

// Read reads the connection's next bytes; io.EOF once the peer ended the
// stream.
func (c *Conn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if len(c.pending) == 0 && c.rerr == nil {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.rerr = c.endError()
			}
			c.pending = f
		case <-c.done:
			return 0, ErrClosed
		case <-c.deadline.expired():
			return 0, os.ErrDeadlineExceeded
		}
	}
	if len(c.pending) == 0 {
		return 0, c.rerr
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// endError is what reads return after the pump ended: ErrClosed when we
// closed, io.EOF when the peer did.
func (c *Conn) endError() error {
	select {
	case <-c.done:
		return ErrClosed
	default:
		return io.EOF
	}
}

// Write sends p in frames of at most MaxFrame bytes.
func (c *Conn) Write(p []byte) (int, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	n := 0
	for n < len(p) {
		select {
		case <-c.done:
			return n, ErrClosed
		default:
		}
		chunk := p[n:min(len(p), n+MaxFrame)]
		if err := c.stream.Send(&agentv1.TunnelFrame{Data: chunk}); err != nil {
			return n, err
		}
		n += len(chunk)
	}
	return n, nil
}

// Close ends the connection: reads and writes fail with ErrClosed from
// now on, and end is called (once) to end the stream, which also ends the
// pump. It is safe to call more than once and from any goroutine.
func (c *Conn) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.end()
	})
	return nil
}

// Ended is closed once the stream has ended and the pump has exited.
func (c *Conn) Ended() <-chan struct{} { return c.pumped }

// Done is closed once Close has been called.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) LocalAddr() net.Addr  { return c.local }
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets the read deadline; see Conn.
func (c *Conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline makes pending and later reads fail with
// os.ErrDeadlineExceeded from t on; zero means none.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.deadline.set(t)
	return nil
}

// SetWriteDeadline is accepted and not enforced; see Conn.
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }

// Addr is the address of a tunnel's ends: the cluster's name, or "hub".
type Addr string

func (a Addr) Network() string { return "tether-tunnel" }
func (a Addr) String() string  { return string(a) }
