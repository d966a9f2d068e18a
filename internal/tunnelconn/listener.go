package tunnelconn

import (
	"context"
	"net"
	"sync"
)

// Listener is a net.Listener whose connections are handed to it with
// Offer instead of accepted from a socket: the agent serves its tunnels
// with an http.Server on it.
type Listener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewListener returns a Listener reporting addr as its address.
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Offer hands c to the next Accept; it returns net.ErrClosed once the
// Listener is closed, or ctx's error.
func (l *Listener) Offer(ctx context.Context, c net.Conn) error {
	select {
	case l.conns <- c:
		return nil
	case <-l.done:
		return net.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Accept returns the next offered connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Offer return net.ErrClosed.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address given to NewListener.
func (l *Listener) Addr() net.Addr { return l.addr }
