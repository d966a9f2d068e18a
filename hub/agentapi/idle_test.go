package agentapi_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"google.golang.org/grpc/connectivity"
)

// idleBound is the short handshake and idle bound of these tests; the
// generous deadlines below only keep a failure from hanging.
const idleBound = 200 * time.Millisecond

func TestConnectionThatNeverHandshakesIsClosed(t *testing.T) {
	h := startHub(t, agentapi.Config{HandshakeTimeout: idleBound})
	conn, err := net.Dial("tcp", h.addr)
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

func TestConnectionWithoutCallsIsClosedButAStreamStays(t *testing.T) {
	h := startHub(t, agentapi.Config{MaxConnectionIdle: idleBound})
	h.works.Set(edge1, work("a", "1"))
	a := h.connect(t, "edge-1", &agentv1.Hello{})
	a.expect("welcome "+hubIdentity, "upsert a@1", "syncdone 1")

	idle := h.dial(t, nil) // TLS and HTTP/2 set up, no call ever made
	idle.Connect()
	eventually(t, "the idle connection ready", func() bool { return idle.GetState() == connectivity.Ready })
	eventually(t, "the hub to close the idle connection", func() bool { return idle.GetState() != connectivity.Ready })

	// The agent's stream, a call in progress all along, still serves.
	h.works.Set(edge1, work("a", "2"))
	a.expect("upsert a@2")
}
