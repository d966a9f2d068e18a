package hubclient_test

import (
	"crypto/x509"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
)

// creds is a fake of the agent's credentials: its certificate is due for
// renewal at once and expires soon, so a refusal is retried within
// seconds.
type creds struct {
	mu        sync.Mutex // guards the fields below
	notAfter  time.Time
	installed [][]byte
	requests  int
}

func (c *creds) Certificate() (*x509.Certificate, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &x509.Certificate{SerialNumber: big.NewInt(int64(len(c.installed) + 1)), NotAfter: c.notAfter}, c.notAfter.Add(-time.Hour), nil
}

func (c *creds) Request() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	return []byte("csr"), nil
}

func (c *creds) Renewed(certPEM []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.installed = append(c.installed, certPEM)
	c.notAfter = time.Now().Add(time.Hour) // the next renewal is 42 min away
	return nil
}

func (c *creds) got() ([][]byte, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.installed, c.requests
}

// TestRenewalOverTheStream: a certificate past its renewal time is renewed
// right after Welcome; a refusal is retried before expiry; the renewed one
// is installed while the stream goes on; the next stream comes on a new
// connection (a new TLS handshake presents the new certificate).
func TestRenewalOverTheStream(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	c := &creds{notAfter: time.Now().Add(4 * time.Second)}
	startAgent(t, certs, hub.Addr, t.TempDir(), func(cfg *hubclient.Config) { cfg.Credentials = c })
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, time.Hour), hubtest.SyncDone(0))
	if r := s.Recv(t, hubtest.Renewals).GetCertificateRenewal(); string(r.GetCsrPem()) != "csr" {
		t.Fatalf("renewal request = %v; want the credentials' CSR", r)
	}
	asked := time.Now()
	s.Send(t, hubtest.Renewed(nil, "injected refusal"))
	s.Recv(t, hubtest.Renewals)
	if waited := time.Since(asked); waited > 3*time.Second {
		t.Errorf("a refusal with 4 s left was retried after %s; want within half the time left", waited)
	}
	s.Send(t, hubtest.Renewed([]byte("new certificate"), ""))
	s.Send(t, hubtest.Upsert("after", "v1"))
	s.Recv(t, ackOf("after")) // the same stream goes on
	installed, requests := c.got()
	if len(installed) != 1 || string(installed[0]) != "new certificate" || requests != 2 {
		t.Errorf("installed %q after %d requests; want the renewed certificate after 2", installed, requests)
	}

	s.Close(nil)
	next := hub.Next(t)
	if next.Peer() == s.Peer() {
		t.Errorf("the stream after a renewal came from %s, the old connection; want a new connection", next.Peer())
	}
	next.Send(t, hubtest.Welcome(hubA, time.Hour), hubtest.SyncDone(1))
	next.Send(t, hubtest.Upsert("again", "v1"))
	next.Recv(t, ackOf("again"))
	if _, requests := c.got(); requests != 2 {
		t.Errorf("%d renewal requests; want none more before the new certificate's renewal time", requests)
	}
}
