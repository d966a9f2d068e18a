package hub_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// TestHubClosesSilentConnections checks that the hub's connection bounds
// reach its gRPC server (hub/agentapi tests the bounds themselves).
func TestHubClosesSilentConnections(t *testing.T) {
	cfg := baseConfig(t, etcdtest.Start(t, etcdtest.Options{TLS: true}))
	cfg.HandshakeTimeout = 200 * time.Millisecond
	r := runReplica(t, cfg)
	r.serving(t)
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.Read(make([]byte, 1)) // sends nothing, not even a TLS ClientHello
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read of a silent connection = %d bytes, %v; want the hub to close it", n, err)
	}
}
