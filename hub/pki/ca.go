package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/durable"
)

// Lifetimes of what the CA issues by default.
const (
	// CALifetime is ten years: rotating the CA means re-registering every agent.
	CALifetime = 10 * 365 * 24 * time.Hour
	// clockSkew backdates NotBefore so that members with slightly slow
	// clocks accept a fresh certificate.
	clockSkew = 5 * time.Minute
)

// File names in the PKI directory.
const (
	caCertFile = "ca.crt"
	caKeyFile  = "ca.key"
)

// CA signs certificates with the hub's key.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     crypto.Signer
}

// LoadOrCreateCA reads dir/ca.crt and dir/ca.key, creating both (mode 0600
// for the key) if neither exists. One without the other is an error.
func LoadOrCreateCA(dir string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return ParseCA(certPEM, keyPEM)
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
		ca, key, err := newCA()
		if err != nil {
			return nil, err
		}
		if err := writeCA(dir, ca.CertPEM, key); err != nil {
			return nil, err
		}
		return ca, nil
	case certErr != nil:
		return nil, fmt.Errorf("pki: read %s: %w", certPath, certErr)
	default:
		return nil, fmt.Errorf("pki: read %s: %w", keyPath, keyErr)
	}
}

// ParseCA builds a CA from PEM certificate and key.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := certs.ParseCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: CA certificate %q is not a CA", cert.Subject.CommonName)
	}
	key, err := certs.ParsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("pki: CA key is not the key of CA certificate %q", cert.Subject.CommonName)
	}
	return &CA{Cert: cert, CertPEM: certPEM, key: key}, nil
}

// LoadCA reads a CA given as two PEM files, e.g. a Kubernetes Secret's
// tls.crt and tls.key mounted into every hub replica.
func LoadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w (files %s, %s)", err, certPath, keyPath)
	}
	return ca, nil
}

// HasCA tells whether dir holds a CA certificate, the file LoadOrCreateCA
// reads before it would create one.
func HasCA(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, caCertFile))
	return err == nil
}

// encodeKey is the CA key in PEM.
func encodeKey(ca *CA) ([]byte, error) { return certs.EncodePrivateKey(ca.key) }

func newCA() (*CA, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "tether-hub-ca", Organization: []string{"tether"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("pki: create CA: %w", err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyPEM, err := certs.EncodePrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return &CA{Cert: cert, CertPEM: certs.EncodeCertificate(der), key: key}, keyPEM, nil
}

// Hash is the CA's pin in kubeadm's form: "sha256:" and the hex SHA-256 of
// the CA certificate's SubjectPublicKeyInfo. Agents compare it before they
// send anything to a hub.
func (ca *CA) Hash() string { return certs.Hash(ca.Cert) }

// Pool is a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("pki: crypto/rand failed: %v", err)) // the OS has no entropy: nothing can be signed safely
	}
	return n
}

// writeCA writes a new CA into dir durably, the key first: a crash
// between the two leaves a key without a certificate, which
// LoadOrCreateCA refuses rather than pairing it with another. A file that
// appeared meanwhile is never overwritten.
func writeCA(dir string, certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := durable.CreateFile(filepath.Join(dir, caKeyFile), keyPEM, 0o600); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if err := durable.CreateFile(filepath.Join(dir, caCertFile), certPEM, 0o600); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}
