package memberproxy_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/memberproxy"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/internal/tunnelconn"
)

func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{Only: []string{"tether/hub/memberproxy.", "tether/internal/tunnelconn."}}))
}

// anyCluster authorizes every agent certificate (the registry's check is
// membership's own and tested there).
type anyCluster struct{}

func (anyCluster) Authorize(context.Context, string, *x509.Certificate) error { return nil }

// server serves Tunnels over real gRPC and TLS of a fresh CA.
type server struct {
	ca      *pki.CA
	addr    string
	tunnels *memberproxy.Tunnels
}

func startServer(t *testing.T, openTimeout time.Duration) *server {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingTLS([]string{"127.0.0.1"}, time.Hour, tls.VerifyClientCertIfGiven)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ca: ca, tunnels: memberproxy.NewTunnels(anyCluster{}, openTimeout, hclog.NewNullLogger())}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(serving)))
	agentv1.RegisterTunnelServiceServer(gs, s.tunnels)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	t.Cleanup(func() { gs.Stop(); <-served })
	return s
}

// client is a TunnelService client with the certificate of id.
func (s *server) client(t *testing.T, id pki.Identity) agentv1.TunnelServiceClient {
	t.Helper()
	cfg, err := s.ca.ClientTLS(&id, time.Hour, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return agentv1.NewTunnelServiceClient(conn)
}

// TestTunnelBelongsToItsCluster: a tunnel id offered to cluster a cannot
// be answered by cluster b's agent (NOT_FOUND), only by a's; a user's
// certificate cannot listen; a cluster without a Listen stream is
// ErrNoAgent at once; bytes flow both ways through the tunnel a opened.
func TestTunnelBelongsToItsCluster(t *testing.T) {
	s := startServer(t, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if _, err := s.tunnels.Dial(ctx, "a"); err == nil || !isNoAgent(err) {
		t.Fatalf("Dial to a cluster that does not listen = %v; want ErrNoAgent", err)
	}
	user, err := s.client(t, pki.Identity{Kind: pki.KindAdmin, Name: "alice"}).Listen(ctx, &agentv1.ListenRequest{})
	if err == nil {
		_, err = user.Recv()
	}
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("Listen with a user's certificate = %v; want PERMISSION_DENIED", err)
	}

	a := s.client(t, pki.Identity{Kind: pki.KindAgent, Name: "a"})
	b := s.client(t, pki.Identity{Kind: pki.KindAgent, Name: "b"})
	offers, err := a.Listen(ctx, &agentv1.ListenRequest{Mode: "full"})
	if err != nil {
		t.Fatal(err)
	}
	waitListening(t, s.tunnels, "a")
	dialed := make(chan net.Conn, 1)
	dialErr := make(chan error, 1)
	go func() {
		c, err := s.tunnels.Dial(ctx, "a")
		dialed <- c
		dialErr <- err
	}()
	offer, err := offers.Recv()
	if err != nil {
		t.Fatal(err)
	}

	if code := answer(ctx, t, b, offer.GetTunnelId()); code != codes.NotFound {
		t.Errorf("cluster b answering cluster a's tunnel id: %s; want NOT_FOUND", code)
	}
	stream, err := a.Tunnel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&agentv1.TunnelFrame{TunnelId: offer.GetTunnelId(), Data: []byte("hi ")}); err != nil {
		t.Fatal(err)
	}
	hubEnd := <-dialed
	if err := <-dialErr; err != nil {
		t.Fatalf("Dial(a) = %v; want the tunnel a opened", err)
	}
	agentEnd := tunnelconn.New(stream, func() { _ = stream.CloseSend() }, tunnelconn.Addr("a"), tunnelconn.Addr("hub"), nil)
	go agentEnd.Write([]byte("there"))
	got := make([]byte, len("hi there"))
	if _, err := io.ReadFull(hubEnd, got); err != nil || string(got) != "hi there" {
		t.Errorf("the hub read %q, %v from the tunnel; want %q", got, err, "hi there")
	}
	hubEnd.Close()
	if _, err := agentEnd.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the agent's read after the hub closed = %v; want io.EOF", err)
	}
	agentEnd.Close()
	<-agentEnd.Ended()
}

// answer opens a Tunnel as client with id and returns the code it ends
// with.
func answer(ctx context.Context, t *testing.T, c agentv1.TunnelServiceClient, id []byte) codes.Code {
	t.Helper()
	stream, err := c.Tunnel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&agentv1.TunnelFrame{TunnelId: id}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	return status.Code(err)
}

func waitListening(t *testing.T, ts *memberproxy.Tunnels, cluster string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := ts.Listening(cluster); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s's Listen stream never registered", cluster)
		}
	}
}

func isNoAgent(err error) bool { return errors.Is(err, memberproxy.ErrNoAgent) }

// TestSilentTunnelEnds: a Tunnel stream that names no tunnel is ended
// after the open timeout instead of held.
func TestSilentTunnelEnds(t *testing.T) {
	s := startServer(t, 300*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := s.client(t, pki.Identity{Kind: pki.KindAgent, Name: "a"}).Tunnel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), "no tunnel id within") {
		t.Errorf("a Tunnel stream that never sends = %v; want the hub's DEADLINE_EXCEEDED after the open timeout", err)
	}
}
