package hub

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/serving/servingtest"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// runHub runs a whole hub in this process on dir, listening on a free
// loopback port, and returns its address once it wrote hub.addr. It is
// stopped, and must stop cleanly, at the end of the test.
func runHub(t *testing.T, dir string, cfg Config, renewAfter func(time.Duration) time.Duration) string {
	t.Helper()
	cfg.DataDir, cfg.Listen = dir, "127.0.0.1:0"
	h, err := New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	h.servingRenewAfter = renewAfter
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub Run: %v", err)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if data, err := os.ReadFile(filepath.Join(dir, AddrFile)); err == nil {
			return strings.TrimSpace(string(data))
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("hub stopped during start-up: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub wrote no hub.addr within a minute")
		}
	}
}

// TestServingCertificateRotatesWhileRunning: a hub whose serving
// certificate (lifetime 1m) is re-issued every 2 s. A TLS client
// handshaking again and again sees three certificates, each valid when it
// got it, all for the hub's address, and never fails a handshake. A gRPC
// connection made with admin.conf before the first rotation is never
// redialed and keeps answering, over the certificate it was made with.
// Before, the hub issued one certificate at start and served it until it
// was restarted.
func TestServingCertificateRotatesWhileRunning(t *testing.T) {
	dir := t.TempDir()
	addr := runHub(t, dir, Config{ServingCertLifetime: time.Minute}, func(time.Duration) time.Duration { return 2 * time.Second })
	admin, err := clientconfig.Load(filepath.Join(dir, AdminConfFile))
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := admin.TLS()
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := listTokens(ctx, t, conn)
	if life := time.Until(first.NotAfter); life > time.Minute {
		t.Errorf("serving certificate valid for %s more; want --serving-cert-lifetime 1m", life)
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(admin.CertificateAuthority))
	seen := map[string]bool{first.SerialNumber.String(): true}
	deadline := time.Now().Add(40 * time.Second) // before the first certificate expires
	for len(seen) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d serving certificates within 40s; want 3 (re-issued every 2s)", len(seen))
		}
		leaf := servingtest.Handshake(t, pool, addr)
		if now := time.Now(); !now.Before(leaf.NotAfter) {
			t.Fatalf("handshake at %s got a certificate that expired at %s", now, leaf.NotAfter)
		}
		seen[leaf.SerialNumber.String()] = true
		time.Sleep(20 * time.Millisecond) // pacing, not a condition: the loop ends on what it saw
	}

	if got := listTokens(ctx, t, conn); got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Errorf("the admin connection's certificate is now %x; want the first, %x, on the same connection", got.SerialNumber, first.SerialNumber)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the admin client dialed %d times; want once, across %d rotations", n, len(seen)-1)
	}
}

// listTokens calls an admin-only RPC over conn and returns the serving
// certificate of the connection it went over.
func listTokens(ctx context.Context, t *testing.T, conn *grpc.ClientConn) *x509.Certificate {
	t.Helper()
	var p peer.Peer
	if _, err := hubv1.NewTokenServiceClient(conn).ListTokens(ctx, &hubv1.ListTokensRequest{}, grpc.Peer(&p)); err != nil {
		t.Fatalf("ListTokens: %v", err)
	}
	return servingtest.PeerLeaf(t, "ListTokens", &p)
}
