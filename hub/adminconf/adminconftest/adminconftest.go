// Package adminconftest writes and reads admin.conf files for tests of
// hub/adminconf and of the hub: a certificate of any identity and
// validity, signed by a CA directory, which pki never issues (it issues
// certificates valid from now):
//
//	before := adminconftest.Write(t, path, caDir, id, notBefore, notAfter, "10.0.0.1:7443")
//	conf, leaf := adminconftest.Cert(t, path)
//
// It imports hub/pki, internal/certs and internal/clientconfig.
package adminconftest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// Write writes an admin.conf at path naming server, with a certificate
// for id valid from notBefore to notAfter, signed by the CA in caDir
// (created if missing). It returns the file's content.
func Write(t testing.TB, path, caDir string, id pki.Identity, notBefore, notAfter time.Time, server string) []byte {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(caDir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := certs.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: id.Name, Organization: []string{"tether:" + string(id.Kind)}},
		NotBefore:    notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	clientKey, err := certs.EncodePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &clientconfig.Config{Server: server, User: id.Name, CertificateAuthority: string(ca.CertPEM),
		ClientCertificate: string(certs.EncodeCertificate(der)), ClientKey: string(clientKey)}
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Cert reads the config at path and its client certificate.
func Cert(t testing.TB, path string) (*clientconfig.Config, *x509.Certificate) {
	t.Helper()
	c, err := clientconfig.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	leaf, err := certs.ParseCertificate([]byte(c.ClientCertificate))
	if err != nil {
		t.Fatal(err)
	}
	return c, leaf
}
