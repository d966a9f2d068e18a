package pki

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/certs"
)

func newTestCA(t *testing.T) *CA {
	t.Helper()
	ca, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatalf("LoadOrCreateCA: %v", err)
	}
	return ca
}

func TestCAIsCreatedOnceAndReloaded(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, caKeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("CA key file: %v, mode %v; want mode 0600", err, info.Mode())
	}
	again, err := LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if first.Hash() != again.Hash() {
		t.Errorf("reloaded CA hash = %s; want %s", again.Hash(), first.Hash())
	}
	der, _ := x509.MarshalPKIXPublicKey(first.Cert.PublicKey)
	sum := sha256.Sum256(der)
	if want := "sha256:" + hex.EncodeToString(sum[:]); first.Hash() != want {
		t.Errorf("Hash = %s; want %s (SHA-256 of the SubjectPublicKeyInfo)", first.Hash(), want)
	}
	os.Remove(filepath.Join(dir, caKeyFile))
	if _, err := LoadOrCreateCA(dir); err == nil {
		t.Error("LoadOrCreateCA with the key missing succeeded; want an error, not a new CA")
	}
}

// handshake runs a real TLS handshake on 127.0.0.1 and returns the identity
// the server read from the client's verified certificate.
func handshake(t *testing.T, serverCA, clientCA *CA, client Issued) (Identity, error) {
	t.Helper()
	serving, err := serverCA.IssueServing([]string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	srvCert, _ := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientCAs: serverCA.Pool(), ClientAuth: tls.RequireAndVerifyClientCert,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan Identity, 1)
	errs := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		tc := conn.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			errs <- err
			return
		}
		id, err := IdentityOf(tc.ConnectionState().PeerCertificates[0])
		if err != nil {
			errs <- err
			return
		}
		got <- id
	}()
	cliCert, _ := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), &tls.Config{
		Certificates: []tls.Certificate{cliCert}, RootCAs: clientCA.Pool(), ServerName: "127.0.0.1",
	})
	if err == nil {
		conn.Handshake()
		defer conn.Close()
	}
	select {
	case id := <-got:
		return id, err
	case serr := <-errs:
		if err == nil {
			err = serr
		}
		return Identity{}, err
	}
}

func TestClientIdentityCrossesARealHandshake(t *testing.T) {
	ca := newTestCA(t)
	for _, id := range []Identity{{Name: "edge-1", Kind: KindAgent}, {Name: "alice", Kind: KindViewer}, {Name: "admin", Kind: KindAdmin}} {
		issued, err := ca.IssueClient(id, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := handshake(t, ca, ca, issued); err != nil || got != id {
			t.Errorf("identity over TLS = %+v, %v; want %+v", got, err, id)
		}
	}
}

func TestCertificateFromAnotherCAIsRefused(t *testing.T) {
	hub, other := newTestCA(t), newTestCA(t)
	forged, err := other.IssueClient(Identity{Name: "edge-1", Kind: KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := handshake(t, hub, hub, forged); err == nil {
		t.Errorf("handshake with a certificate of another CA = %+v; want refused", id)
	}
	good, _ := hub.IssueClient(Identity{Name: "edge-1", Kind: KindAgent}, time.Hour)
	if _, err := handshake(t, hub, other, good); err == nil {
		t.Error("client that trusts another CA accepted the hub's serving certificate")
	}
}

func TestSignCSRIgnoresRequestedSubject(t *testing.T) {
	ca := newTestCA(t)
	csrPEM, keyPEM, err := certs.NewCSR("edge-1")
	if err != nil {
		t.Fatal(err)
	}
	issued, err := ca.SignCSR(csrPEM, Identity{Name: "edge-1", Kind: KindAgent}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	issued.KeyPEM = keyPEM
	if got, err := handshake(t, ca, ca, issued); err != nil || got.Name != "edge-1" {
		t.Errorf("identity of a CSR-signed certificate = %+v, %v; want edge-1", got, err)
	}
	if life := issued.Cert.NotAfter.Sub(issued.Cert.NotBefore); life > time.Minute+clockSkew+time.Second {
		t.Errorf("lifetime = %s; want one minute plus %s skew", life, clockSkew)
	}
	if _, err := ca.SignCSR([]byte("garbage"), Identity{Name: "x", Kind: KindAgent}, time.Minute); err == nil {
		t.Error("SignCSR(garbage) succeeded; want an error")
	}
}

func TestIdentityOfRejectsForeignCertificates(t *testing.T) {
	ca := newTestCA(t)
	serving, _ := ca.IssueServing([]string{"127.0.0.1"}, time.Hour)
	if id, err := IdentityOf(serving.Cert); err == nil {
		t.Errorf("IdentityOf(serving certificate) = %+v; want an error", id)
	}
	if _, err := ca.IssueClient(Identity{Name: "x", Kind: "root"}, time.Hour); err == nil {
		t.Error("IssueClient with kind root succeeded; want an error")
	}
	if _, err := ca.IssueClient(Identity{Kind: KindAgent}, time.Hour); err == nil {
		t.Error("IssueClient without a name succeeded; want an error")
	}
}
