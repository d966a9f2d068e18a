package security

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// streamsPerConnection: a viewer opens 101 Watch calls on one connection.
// The hub allows 100 calls at once per connection (its HTTP/2
// SETTINGS_MAX_CONCURRENT_STREAMS, tether-hub --max-streams-per-connection):
// the 101st waits, here until its deadline, and starts once one of the
// others ends.
func streamsPerConnection(t *testing.T, e *hostileEnv) string {
	const limit = 100 // tether-hub's default --max-streams-per-connection
	conn := dial(t, e.h.addr, userTLS(t, e.viewerConf))
	objects := hubv1.NewObjectServiceClient(conn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancels := make([]context.CancelFunc, limit)
	for i := range limit {
		var wctx context.Context
		wctx, cancels[i] = context.WithCancel(ctx)
		if _, err := objects.Watch(wctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default"}); err != nil {
			t.Fatalf("Watch %d of %d on one connection: %v", i+1, limit, err)
		}
	}
	waiting, cancelWait := context.WithTimeout(ctx, 2*time.Second)
	defer cancelWait()
	if _, err := objects.Watch(waiting, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap"}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Watch %d on one connection = %v; want it to wait for a free call (DeadlineExceeded here)", limit+1, err)
	}
	cancels[0]()
	if _, err := objects.Watch(rpcCtx(t), &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap"}); err != nil {
		t.Fatalf("Watch after one of the %d ended: %v; want it to start", limit, err)
	}
	return fmt.Sprintf("contained: call %d waited until one of %d ended", limit+1, limit)
}

// streamsPerCluster: the hostile agent opens 10 Connect streams at once,
// each on its own connection. The hub keeps at most 4 of one cluster in
// progress: the older ones end superseded, saying why.
func streamsPerCluster(t *testing.T, e *hostileEnv) string {
	const streams, limit = 10, 4 // agentapi.DefaultMaxStreamsPerCluster
	var opened []*agentStream
	for i := range streams {
		s, err := openStream(t, e.h, e.hostile)
		if err != nil {
			t.Fatalf("stream %d of the hostile cluster: %v", i+1, err)
		}
		opened = append(opened, s)
	}
	superseded := 0
	for i, s := range opened[:streams-limit] {
		bye, err, ended := s.ended(servingWait)
		if !ended {
			t.Fatalf("stream %d of %d of one cluster still open; want at most %d", i+1, streams, limit)
		}
		if bye.GetReason() == agentv1.DisconnectReason_DISCONNECT_REASON_SUPERSEDED {
			superseded++
		} else {
			t.Errorf("stream %d ended with goodbye %v (%v); want SUPERSEDED", i+1, bye, err)
		}
	}
	for _, s := range opened {
		s.cancel()
	}
	return fmt.Sprintf("contained: %d of %d streams ended superseded", superseded, streams)
}

// silentStreamsPerCluster: the hostile agent opens 10 Connect calls, each
// on its own connection, and says nothing on them. The hub keeps at most 4
// calls of one cluster in progress, Hello or not: 6 end superseded at once
// instead of holding the hub's resources until the Hello timeout.
func silentStreamsPerCluster(t *testing.T, e *hostileEnv) string {
	const streams, limit = 10, 4 // agentapi.DefaultMaxStreamsPerCluster
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, streams)
	for i := range streams {
		cs, err := agentv1.NewAgentServiceClient(dial(t, e.h.addr, e.hostile.tlsConfig(t))).Connect(ctx)
		if err != nil {
			t.Fatalf("Connect %d of the hostile cluster: %v", i+1, err)
		}
		go func() { ended <- drain(cs.Recv) }()
	}
	timeout := time.After(servingWait)
	for n := 0; n < streams-limit; n++ {
		select {
		case err := <-ended:
			if !strings.Contains(err.Error(), fmt.Sprintf("opened more than %d streams at once", limit)) {
				t.Errorf("a silent stream of one cluster ended with %v; want superseded for being past %d", err, limit)
			}
		case <-timeout:
			t.Fatalf("%d of %d silent streams of one cluster ended within %s; want %d", n, streams, servingWait, streams-limit)
		}
	}
	cancel()
	for range limit {
		<-ended // the drains end with the context
	}
	return fmt.Sprintf("contained: %d of %d ended superseded at once", streams-limit, streams)
}

// TestHostileConnections: a hub with short connection bounds
// (--handshake-timeout 1s, --max-connection-idle 2s) closes a TCP
// connection that never starts TLS, a TLS connection that never answers
// the hub, and a well-behaved gRPC connection that makes no call, while it
// serves the probe.
func TestHostileConnections(t *testing.T) {
	e := newHostileEnv(t, "--handshake-timeout", "1s", "--max-connection-idle", "2s")
	runAttacks(t, e, []attack{
		{"TCP connection that never starts TLS", silentConnection},
		{"TLS connection that makes no call", idleConnection},
		{"gRPC connection that makes no call", idleClientConn},
	})
}

// silentConnection: a TCP connection that sends nothing is closed.
func silentConnection(t *testing.T, e *hostileEnv) string {
	conn, err := net.Dial("tcp", e.h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, err := conn.Read(make([]byte, 1))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of a silent connection = %d bytes, %v; want the hub to close it", n, err)
	}
	return fmt.Sprintf("contained: closed by the hub after %.1f s", time.Since(start).Seconds())
}

// idleConnection: a TLS connection with a viewer's certificate that sends
// the HTTP/2 preface and then nothing, not even the acknowledgements of the
// hub's settings and pings, is closed.
func idleConnection(t *testing.T, e *hostileEnv) string {
	tc := userTLS(t, e.viewerConf)
	tc.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", e.h.addr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The HTTP/2 preface and an empty SETTINGS frame: a connection gRPC
	// accepts, on which no call ever starts.
	if _, err := conn.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("an idle TLS connection still open after %s; want the hub to close it", servingWait)
			}
			return fmt.Sprintf("contained: closed by the hub after %.1f s (%v)", time.Since(start).Seconds(), err)
		}
	}
}

// idleClientConn: a gRPC connection with a viewer's certificate that
// answers the hub's pings but makes no call is closed: it leaves Ready.
func idleClientConn(t *testing.T, e *hostileEnv) string {
	conn := dial(t, e.h.addr, userTLS(t, e.viewerConf))
	conn.Connect()
	poll(t, servingWait, "the idle connection ready", func() (bool, string) {
		return conn.GetState() == connectivity.Ready, conn.GetState().String()
	})
	start := time.Now()
	poll(t, servingWait, "the hub to close the idle connection", func() (bool, string) {
		return conn.GetState() != connectivity.Ready, conn.GetState().String()
	})
	return fmt.Sprintf("contained: closed by the hub after %.1f s", time.Since(start).Seconds())
}

// streamsIgnoringTheLimit: a client that ignores the hub's
// SETTINGS_MAX_CONCURRENT_STREAMS opens 101 Watch calls at once on one
// connection, raw HTTP/2 frames, sending no request message so that each
// stays in progress. The hub refuses the 101st stream (RST_STREAM
// REFUSED_STREAM) and keeps the others.
func streamsIgnoringTheLimit(t *testing.T, e *hostileEnv) string {
	const limit = 100 // tether-hub's default --max-streams-per-connection
	tc := userTLS(t, e.viewerConf)
	tc.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", e.h.addr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for i := range limit + 1 {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: watchHeaders(e.h.addr), EndHeaders: true}); err != nil {
			t.Fatalf("HEADERS of stream %d: %v", i+1, err)
		}
	}
	if err := conn.SetReadDeadline(time.Now().Add(servingWait)); err != nil {
		t.Fatal(err)
	}
	last := uint32(2*limit + 1)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("read from the hub: %v; want RST_STREAM of stream %d", err, last)
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.StreamID != last || f.ErrCode != http2.ErrCodeRefusedStream {
				t.Fatalf("RST_STREAM %v of stream %d; want only stream %d refused", f.ErrCode, f.StreamID, last)
			}
			return fmt.Sprintf("refused: stream %d reset %v, %d kept", limit+1, f.ErrCode, limit)
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v; want only stream %d refused", f.ErrCode, last)
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		}
	}
}

// watchHeaders is the HPACK block of a Watch call's request headers.
func watchHeaders(authority string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, h := range [][2]string{
		{":method", "POST"}, {":scheme", "https"}, {":authority", authority},
		{":path", hubv1.ObjectService_Watch_FullMethodName}, {"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	return b.Bytes()
}
