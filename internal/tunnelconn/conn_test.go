package tunnelconn_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/internal/tunnelconn"
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{}))
}

// half is one direction of an in-memory stream pair: a fake of gRPC's
// stream, for these unit tests of the adapter's logic alone (the hub's
// and agent's tests run it over real gRPC).
type half struct {
	ch   chan *agentv1.TunnelFrame
	done chan struct{}
	once sync.Once
}

func newHalf() *half { return &half{ch: make(chan *agentv1.TunnelFrame), done: make(chan struct{})} }
func (h *half) end() { h.once.Do(func() { close(h.done) }) }

// end is one side: it sends on out and receives on in.
type end struct{ in, out *half }

func (e end) Send(f *agentv1.TunnelFrame) error {
	select {
	case e.out.ch <- f:
		return nil
	case <-e.out.done:
		return io.EOF
	case <-e.in.done:
		return io.EOF
	}
}

func (e end) Recv() (*agentv1.TunnelFrame, error) {
	select {
	case f := <-e.in.ch:
		return f, nil
	case <-e.in.done:
		return nil, io.EOF
	case <-e.out.done:
		return nil, context.Canceled
	}
}

// pair returns two Conns joined to each other; closing either ends both
// directions, as a gRPC stream's end does.
func pair() (*tunnelconn.Conn, *tunnelconn.Conn) {
	ab, ba := newHalf(), newHalf()
	a := tunnelconn.New(end{in: ba, out: ab}, ab.end, tunnelconn.Addr("a"), tunnelconn.Addr("b"), nil)
	b := tunnelconn.New(end{in: ab, out: ba}, ba.end, tunnelconn.Addr("b"), tunnelconn.Addr("a"), nil)
	return a, b
}

func TestConnCarriesBytesBothWays(t *testing.T) {
	a, b := pair()
	defer closeBoth(a, b)
	data := make([]byte, 3*tunnelconn.MaxFrame+17)
	rand.Read(data)
	errc := make(chan error, 1)
	go func() {
		_, err := a.Write(data)
		errc <- err
	}()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatalf("ReadFull = %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write = %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes that differ from the %d written", len(got), len(data))
	}
}

func TestCloseEndsPeerWithEOFAndUnblocksOwnRead(t *testing.T) {
	a, b := pair()
	readErr := make(chan error, 1)
	go func() {
		_, err := a.Read(make([]byte, 1))
		readErr <- err
	}()
	b.Close()
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, tunnelconn.ErrClosed) {
		t.Errorf("Read after own Close = %v; want ErrClosed", err)
	}
	select {
	case err := <-readErr:
		if err != io.EOF {
			t.Errorf("peer's Read after Close = %v; want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("peer's Read still blocked 5 s after Close")
	}
	a.Close()
	<-a.Ended()
	<-b.Ended()
}

func TestReadDeadline(t *testing.T) {
	a, b := pair()
	defer closeBoth(a, b)
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := a.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline = %v; want os.ErrDeadlineExceeded", err)
	}
	a.SetReadDeadline(time.Time{}) // cleared: reads wait again, as http.Server expects after an abort
	go b.Write([]byte("x"))
	buf := make([]byte, 1)
	if n, err := a.Read(buf); err != nil || n != 1 || buf[0] != 'x' {
		t.Fatalf("Read after clearing the deadline = %d, %v; want 1 byte x", n, err)
	}
	a.SetReadDeadline(time.Now().Add(-time.Second)) // in the past: a pending read aborts at once
	if _, err := a.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read with a past deadline = %v; want os.ErrDeadlineExceeded", err)
	}
}

// closeBoth closes a and b and waits for their streams to end.
func closeBoth(a, b *tunnelconn.Conn) {
	a.Close()
	b.Close()
	<-a.Ended()
	<-b.Ended()
}
