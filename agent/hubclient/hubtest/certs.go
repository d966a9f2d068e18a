package hubtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs are a test CA, a hub serving certificate for 127.0.0.1 and an agent
// client certificate, written as PEM files for the agent's flags.
type Certs struct {
	// CAFile, CertFile and KeyFile are the agent's --ca, --cert and --key.
	CAFile, CertFile, KeyFile string
	// Server is the hub's serving certificate.
	Server tls.Certificate
	// Pool holds the CA.
	Pool *x509.CertPool

	ca    *x509.Certificate // signs ServingFor's certificates
	caKey *ecdsa.PrivateKey
}

// NewCerts mints the certificates into t.TempDir().
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hubtest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	c := &Certs{Pool: x509.NewCertPool(), ca: ca, caKey: caKey}
	c.Pool.AddCert(ca)
	dir := t.TempDir()
	c.CAFile = writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER)

	c.Server = c.ServingFor(t, "127.0.0.1")

	cliKey := newKey(t)
	cliDER := sign(t, ca, caKey, &cliKey.PublicKey, &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "member-1", Organization: []string{"tether:agent"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	c.CertFile = writePEM(t, dir, "agent.crt", "CERTIFICATE", cliDER)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	c.KeyFile = writePEM(t, dir, "agent.key", "PRIVATE KEY", keyDER)
	return c
}

// ServingFor returns a hub serving certificate of the CA valid for hosts
// only (IP addresses or DNS names), like each replica's own certificate.
func (c *Certs) ServingFor(t testing.TB, hosts ...string) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "tether-hub"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key := newKey(t)
	return tls.Certificate{Certificate: [][]byte{sign(t, c.ca, c.caKey, &key.PublicKey, tmpl)}, PrivateKey: key}
}

// ClientTLS returns the agent's TLS configuration for these certificates.
func (c *Certs) ClientTLS(t testing.TB) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: c.Pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1"}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sign(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, pub *ecdsa.PublicKey, tmpl *x509.Certificate) []byte {
	t.Helper()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
