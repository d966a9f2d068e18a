package ha

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certLifetime is how long the suite's certificates are valid: longer than
// any run.
const certLifetime = 24 * time.Hour

// CA is a certificate authority made for one test: etcd's, or a hub CA
// given to a replica with --ca-cert/--ca-key.
type CA struct {
	// CertFile and KeyFile hold the CA in PEM.
	CertFile, KeyFile string
	cert              *x509.Certificate
	key               *ecdsa.PrivateKey
}

// NewCA creates a CA called name and writes it into dir as name.crt and
// name.key.
func NewCA(dir, name string) (*CA, error) {
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	key, cert, err := sign(tmpl, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	ca := &CA{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key"), cert: cert, key: key}
	if err := writePair(ca.CertFile, ca.KeyFile, cert, key); err != nil {
		return nil, fmt.Errorf("write CA %s: %w", name, err)
	}
	return ca, nil
}

// Issue signs a certificate called name for ips (a serving certificate
// when ips is not empty; every certificate is also good for client
// authentication) and writes it into dir as name.crt and name.key.
func (ca *CA) Issue(dir, name string, ips []net.IP) (certFile, keyFile string, err error) {
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: name}, IPAddresses: ips, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	key, cert, err := sign(tmpl, ca.cert, ca.key)
	if err != nil {
		return "", "", fmt.Errorf("issue %s: %w", name, err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := writePair(certFile, keyFile, cert, key); err != nil {
		return "", "", fmt.Errorf("write %s: %w", name, err)
	}
	return certFile, keyFile, nil
}

// sign signs tmpl with parent's key, or itself when parent is nil.
func sign(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64)); err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(certLifetime)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func writePair(certFile, keyFile string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}
