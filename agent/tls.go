package agent

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/durable"
)

// nextSuffix names the files of a renewal in progress: KEY.next is the
// requested key, written before the request is sent; CERT.next the
// certificate the hub returned for it, until both are renamed into place.
const nextSuffix = ".next"

// certFiles are the agent's client certificate and key files: read on
// every TLS handshake, and replaced by a renewal over the stream (they
// implement hubclient.Credentials). A renewal is installed by renaming
// KEY.next and CERT.next into place under mu, so that no handshake reads a
// pair half-replaced; one interrupted by a crash is finished (or dropped)
// by finishRenewal before the files are used.
type certFiles struct {
	certFile, keyFile, caFile string

	mu       sync.Mutex // guards the files and received
	received time.Time  // when the certificate in use arrived; zero: read from disk
}

func newCertFiles(c Config) *certFiles {
	return &certFiles{certFile: c.CertFile, keyFile: c.KeyFile, caFile: c.CAFile}
}

// tlsConfig returns the client TLS configuration: the hub CA from CAFile,
// and the client certificate read from CertFile and KeyFile now (to fail
// early with the flag's name) and again on every handshake. It sets no
// ServerName: gRPC verifies each hub address against its own host
// (hubclient.Dial).
func (c Config) tlsConfig() (*tls.Config, error) { return newCertFiles(c).tlsConfig() }

func (cr *certFiles) tlsConfig() (*tls.Config, error) {
	caPEM, err := os.ReadFile(cr.caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate in the file", cr.caFile)
	}
	if _, err := cr.clientCert(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return cr.clientCert()
		},
	}, nil
}

func (cr *certFiles) clientCert() (*tls.Certificate, error) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cert, err := tls.LoadX509KeyPair(cr.certFile, cr.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert %s, --key %s: %w", cr.certFile, cr.keyFile, err)
	}
	return &cert, nil
}

// Certificate returns the certificate in use and when the agent got it:
// when it arrived, or for one read from disk the time its file was written
// (the agent writes it when it arrives), within its validity.
func (cr *certFiles) Certificate() (*x509.Certificate, time.Time, error) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	pair, err := tls.LoadX509KeyPair(cr.certFile, cr.keyFile)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("--cert %s, --key %s: %w", cr.certFile, cr.keyFile, err)
	}
	cert := pair.Leaf
	issued := cr.received
	if issued.IsZero() {
		if info, err := os.Stat(cr.certFile); err == nil {
			issued = info.ModTime()
		}
	}
	if issued.Before(cert.NotBefore) || issued.After(cert.NotAfter) {
		issued = cert.NotBefore
	}
	return cert, issued, nil
}

// Request returns a CSR for the pending key: the one of an earlier request
// that got no certificate, or a new one, written to KEY.next (0600) before
// anything is sent, so that the key a hub may already have bound is never
// lost.
func (cr *certFiles) Request() ([]byte, error) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	key, err := cr.pendingKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, fmt.Errorf("certificate request: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// pendingKey reads KEY.next, or makes it. mu is held.
func (cr *certFiles) pendingKey() (crypto.Signer, error) {
	path := cr.keyFile + nextSuffix
	if data, err := os.ReadFile(path); err == nil {
		if key, err := certs.ParsePrivateKey(data); err == nil {
			return key, nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	data, err := certs.EncodePrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := durable.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("keep the new key: %w", err)
	}
	return key, nil
}

// Renewed installs certPEM with the pending key: CERT.next written, then
// KEY.next and CERT.next renamed into place and the directory synced.
func (cr *certFiles) Renewed(certPEM []byte) error {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	keyPEM, err := os.ReadFile(cr.keyFile + nextSuffix)
	if err != nil {
		return fmt.Errorf("the requested key: %w", err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("the hub's certificate is not for the requested key: %w", err)
	}
	if err := durable.WriteFile(cr.certFile+nextSuffix, certPEM, 0o644); err != nil {
		return err
	}
	if err := commitRenewal(cr.certFile, cr.keyFile); err != nil {
		return err
	}
	cr.received = time.Now()
	return nil
}

// commitRenewal renames KEY.next, then CERT.next, into place. A crash
// between the two leaves CERT.next matching KEY: finishRenewal renames it.
func commitRenewal(certFile, keyFile string) error {
	if err := os.Rename(keyFile+nextSuffix, keyFile); err != nil {
		return err
	}
	if err := os.Rename(certFile+nextSuffix, certFile); err != nil {
		return err
	}
	if filepath.Dir(certFile) == filepath.Dir(keyFile) {
		return syncDirs(filepath.Dir(certFile))
	}
	return syncDirs(filepath.Dir(certFile), filepath.Dir(keyFile))
}

// finishRenewal completes a renewal a crash interrupted: CERT.next with
// KEY.next (both written, neither renamed) or with KEY (the key renamed)
// is put in place; a CERT.next that matches neither is dropped. KEY.next
// alone is a request without an answer, kept for the next one.
func finishRenewal(certFile, keyFile string) error {
	certPEM, err := os.ReadFile(certFile + nextSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if keyPEM, err := os.ReadFile(keyFile + nextSuffix); err == nil && matches(certPEM, keyPEM) {
		return commitRenewal(certFile, keyFile)
	}
	if keyPEM, err := os.ReadFile(keyFile); err == nil && matches(certPEM, keyPEM) {
		if err := os.Rename(certFile+nextSuffix, certFile); err != nil {
			return err
		}
		return syncDirs(filepath.Dir(certFile))
	}
	return os.Remove(certFile + nextSuffix)
}

func matches(certPEM, keyPEM []byte) bool {
	_, err := tls.X509KeyPair(certPEM, keyPEM)
	return err == nil
}

// syncDirs makes the renames in dirs durable; a variable so that a test
// can see that every credential write reaches it.
var syncDirs = syncDir

// syncDir makes the renames in dirs durable.
func syncDir(dirs ...string) error {
	for _, dir := range dirs {
		if err := durable.SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
