package serving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/serving/servingtest"
)

func TestRenewAfterBounds(t *testing.T) {
	life := 30 * 24 * time.Hour
	for _, tc := range []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"lowest draw", 0, life * 60 / 100},
		{"middle draw", 0.5, life * 65 / 100},
		{"out of range falls back to the lowest", 1.5, life * 60 / 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renewAfter(life, tc.r)
			if d := got - tc.want; d < -time.Second || d > time.Second {
				t.Errorf("renewAfter(%s, %v) = %s; want %s", life, tc.r, got, tc.want)
			}
		})
	}
	if got := renewAfter(life, 0.999999); got >= life*70/100 {
		t.Errorf("renewAfter(%s, 0.999999) = %s; want under 70%% of it", life, got)
	}
}

func newCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// TestHandshakeReplacesDueCertificate: with Run not running, a handshake
// that finds the certificate due gets a new one, never the old.
func TestHandshakeReplacesDueCertificate(t *testing.T) {
	c, err := New(newCA(t), Config{Hosts: []string{"127.0.0.1"}, Lifetime: time.Hour,
		RenewAfter: func(time.Duration) time.Duration { return 0 }}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	first := c.Leaf()
	got, err := c.GetCertificate(nil)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	if got.Leaf.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("GetCertificate served serial %x, due since it was issued; want a new one", first.SerialNumber)
	}
	if len(got.Certificate) != 2 {
		t.Errorf("chain of %d certificates; want the leaf and the CA", len(got.Certificate))
	}
}

func TestNewRefuses(t *testing.T) {
	ca := newCA(t)
	for name, cfg := range map[string]Config{
		"no hosts":          {Lifetime: time.Hour},
		"negative lifetime": {Hosts: []string{"127.0.0.1"}, Lifetime: -time.Hour},
	} {
		if _, err := New(ca, cfg, hclog.NewNullLogger()); err == nil {
			t.Errorf("New(%s) succeeded; want an error", name)
		}
	}
}

// TestRotationUnderLoad: a gRPC server serving through GetCertificate,
// its certificate valid for 6 s and replaced after 2 s. A client
// handshaking again and again sees at least three certificates, each valid
// when it got it, and never fails a handshake. A gRPC connection made with
// the first certificate is never redialed and still answers after that
// certificate has expired.
func TestRotationUnderLoad(t *testing.T) {
	const lifetime = 6 * time.Second
	ca := newCA(t)
	c, err := New(ca, Config{Hosts: []string{"127.0.0.1"}, Lifetime: lifetime,
		RenewAfter: func(time.Duration) time.Duration { return lifetime / 3 }}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- c.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	var dials atomic.Int32
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	first := check(ctx, t, conn)

	seen := map[string]bool{first.SerialNumber.String(): true}
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < 3 || !time.Now().After(first.NotAfter) {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d serving certificates, first expired %v; want 3 and past its expiry within 30s", len(seen), time.Now().After(first.NotAfter))
		}
		leaf := servingtest.Handshake(t, ca.Pool(), addr)
		if now := time.Now(); !now.Before(leaf.NotAfter) {
			t.Fatalf("handshake at %s got a certificate that expired at %s", now, leaf.NotAfter)
		}
		seen[leaf.SerialNumber.String()] = true
		time.Sleep(10 * time.Millisecond) // pacing, not a condition: the loop ends on what it saw
	}

	if got := check(ctx, t, conn); got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Errorf("the connection's certificate is now %x; want the first, %x, on the same connection", got.SerialNumber, first.SerialNumber)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the gRPC client dialed %d times; want once, across %d rotations", n, len(seen)-1)
	}
}

// serve runs a gRPC server with health on 127.0.0.1 over c, stopped at
// the end of the test.
func serve(t *testing.T, c *Cert) string {
	t.Helper()
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{GetCertificate: c.GetCertificate, MinVersion: tls.VersionTLS12})))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// check calls health Check over conn and returns the serving certificate
// of the connection it went over.
func check(ctx context.Context, t *testing.T, conn *grpc.ClientConn) *x509.Certificate {
	t.Helper()
	var p peer.Peer
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p)); err != nil {
		t.Fatalf("health Check: %v", err)
	}
	return servingtest.PeerLeaf(t, "health Check", &p)
}
